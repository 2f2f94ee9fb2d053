import CCurl
import Foundation
import ImagoCore

/// One small HTTP exchange with an identity service (a token endpoint), by libcurl on a thread of its own: no
/// redirects, certificates verified, one timeout for the whole exchange, at most ``maximumAnswerLength`` bytes of
/// answer kept. The credential services (``GoogleAccessTokens``, ``OpenStackTokens``, ``AWSCredentialProvider``)
/// share it.
struct CurlExchange {
    /// `GET`, or `POST` when there is a ``body``.
    var url: URL
    /// Request header fields, `Name: value` each.
    var fields: [String] = []
    /// The POST body; `nil` for a GET.
    var body: String?
    /// A POST body of any bytes (OTLP's protobuf), sent instead of ``body``. Default `nil`.
    var bytes: Data?
    /// How long the whole exchange may take.
    var timeout: Duration
    /// The response header fields to read, by name: from the header or, when it has none of the name, the trailer
    /// (gRPC's `grpc-status`).
    var answerFields: [String] = []
    /// Whether the exchange is HTTP/2 from its first byte, without asking (gRPC's collectors on `http://`; over
    /// `https://` TLS's ALPN must choose HTTP/2). Default `false`: what libcurl chooses.
    var requiresHTTP2 = false
    /// Another method than `GET`/`POST` (`PUT` for EC2's metadata token), sent with ``body`` (none: empty).
    var method: String?
    /// Whether the exchange goes straight to the host whatever the proxy variables say: for the metadata
    /// services on link-local addresses, which no proxy can reach. Default `false`.
    var bypassesProxy = false
    /// AWS Signature Version 4 by libcurl (STS's `AssumeRole`): the signing's region and service, with these
    /// credentials (their session token sent as `x-amz-security-token`). Default `nil`: unsigned.
    var awsSigning: (signing: AWSSigning, credentials: AWSSigning.Credentials)?
    /// The certificates trusted and presented (a collector's private CA, mutual TLS). Default: the system's CAs,
    /// no client certificate.
    var tls = CurlDataLoader.TLSOptions()

    /// What the service answered.
    struct Answer {
        var status: Int
        var data: Data
        /// The fields asked for in ``answerFields`` that came, by the name asked for.
        var fields: [String: String]
    }

    /// A POST of `body` to `url` with `fields`, signed with Signature Version 4 for `region` and `service` with
    /// `credentials`: how Imago calls AWS's services (STS, Secrets Manager, Parameter Store, CloudWatch).
    static func awsPOST(
        _ url: URL, fields: [String], body: String, region: String, service: String,
        credentials: AWSSigning.Credentials, timeout: Duration
    ) -> CurlExchange {
        var exchange = CurlExchange(url: url, fields: fields, body: body, timeout: timeout)
        exchange.awsSigning = (
            AWSSigning(credentials: credentials, region: region, service: service, hosts: []), credentials
        )
        return exchange
    }

    /// The most bytes of an answer kept (a Keystone catalog of a large cloud is tens of kilobytes).
    static let maximumAnswerLength = 1 << 20

    /// The exchange's answer.
    ///
    /// - Throws: ``Failure`` when libcurl fails (the connection, the timeout, an answer over the maximum).
    func perform() async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try performNow() })
            }
        }
    }

    /// Why an exchange got no answer.
    struct Failure: Error, CustomStringConvertible {
        var reason: String
        var description: String { "the exchange with the identity service failed: \(reason)" }
    }

    private final class Received {
        var data = Data()
    }

    private func performNow() throws -> Answer {
        guard let handle = curl_easy_init() else { throw Failure(reason: "libcurl could not start") }
        defer { curl_easy_cleanup(handle) }
        let received = Received()
        let context = Unmanaged.passUnretained(received).toOpaque()
        _ = imago_easy_setopt_string(handle, CURLOPT_URL, url.absoluteString)
        if let bytes {
            // The size first: with it, libcurl copies that many bytes, NULs included.
            _ = imago_easy_setopt_long(handle, CURLOPT_POSTFIELDSIZE, bytes.count)
            _ = bytes.withUnsafeBytes {
                imago_easy_setopt_pointer(
                    handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
            }
        } else if let body = body ?? (method == nil ? nil : "") {
            _ = imago_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, body)
        }
        if let method { _ = imago_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method) }
        if bypassesProxy { _ = imago_easy_setopt_string(handle, CURLOPT_NOPROXY, "*") }
        var fields = fields
        if let (signing, credentials) = awsSigning {
            _ = imago_easy_setopt_string(handle, CURLOPT_AWS_SIGV4, signing.curlProvider)
            _ = imago_easy_setopt_string(handle, CURLOPT_USERNAME, credentials.accessKeyID)
            _ = imago_easy_setopt_string(handle, CURLOPT_PASSWORD, credentials.secretAccessKey)
            if let token = credentials.sessionToken { fields.append("x-amz-security-token: " + token) }
        }
        _ = imago_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = imago_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, CurlEasy.milliseconds(timeout))
        _ = imago_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        if requiresHTTP2 {
            _ = imago_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, imago_http_version_2_prior_knowledge)
        }
        tls.apply(to: handle)
        var list: UnsafeMutablePointer<curl_slist>?
        for field in fields { list = curl_slist_append(list, field) }
        defer { curl_slist_free_all(list) }
        _ = imago_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        _ = imago_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = imago_easy_setopt_writefunction(handle, Self.answerCallback)
        let code = withExtendedLifetime(received) { curl_easy_perform(handle) }
        guard code == CURLE_OK else { throw Failure(reason: String(cString: curl_easy_strerror(code))) }
        var status = 0
        _ = imago_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var answered: [String: String] = [:]
        for name in answerFields {
            var header: UnsafeMutablePointer<curl_header>?
            // The last response's field (CURLH_HEADER: a server header, CURLH_TRAILER: its trailer; request -1: the
            // last request).
            if curl_easy_header(handle, name, 0, UInt32(CURLH_HEADER | CURLH_TRAILER), -1, &header) == CURLHE_OK,
                let value = header?.pointee.value
            {
                answered[name] = String(cString: value)
            }
        }
        return Answer(status: status, data: received.data, fields: answered)
    }

    private static let answerCallback: imago_data_callback = { buffer, size, count, userdata in
        guard let userdata, let buffer else { return 0 }
        let received = Unmanaged<Received>.fromOpaque(userdata).takeUnretainedValue()
        let length = size * count
        guard received.data.count + length <= maximumAnswerLength else { return 0 }  // too long: the transfer fails
        received.data.append(UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: length)
        return length
    }
}

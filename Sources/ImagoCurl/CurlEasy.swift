import CCurl
import Foundation
import ImagoCore

/// One attempt of one transfer: a curl easy handle with its options, request header list, error buffer and the
/// C callbacks (response head, body, socket opening), which reach this object through an `Unmanaged` pointer.
///
/// Made and configured on the caller's thread, then used only by the ``CurlMulti`` thread, which keeps it alive
/// while curl may call back and frees the handle with ``close()``.
// @unchecked Sendable: after `init` every mutable field is touched only on the multi thread.
final class CurlEasy: LoadTransportHandle, @unchecked Sendable {
    /// A final (non-1xx, not-followed 3xx) response head.
    typealias Head = LoadResponseHead

    /// How an attempt ended.
    struct Outcome {
        let code: CURLcode
        let message: String
        let metrics: TransferMetrics?
        let finalURL: URL?
        /// Set when the address policy refused the connection.
        let refusal: (host: String, address: String)?
        /// The last redirect target seen (for an unsupported-scheme redirect).
        let redirectTarget: URL?
    }

    private(set) var handle: UnsafeMutableRawPointer?
    /// The attempt this handle carries; told of the head, the body and the end.
    let attempt: LoadAttempt
    private let multi: CurlMulti
    private let maximumRedirects: Int
    private let maximumBodySize: Int64
    /// The URL as given to curl (NUL-terminated).
    private let requestURLText: [CChar]
    private let policy: AddressPolicy
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var resolveList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let follows: Bool
    /// The longest time without a byte of response (the loader's idle timeout).
    let idleTimeout: Duration
    /// When the last byte (or the start) was seen; the multi thread ends the attempt once it is `idleTimeout` old.
    var lastActivity = ContinuousClock.now

    // Multi-thread state of the response being received.
    private var headers: [String: String] = [:]
    private var isHeadDelivered = false
    private var location: String?
    private var refusal: (host: String, address: String)?

    /// A configured handle for `request`, or `nil` when curl cannot make one.
    init?(attempt: LoadAttempt, configuration: CurlDataLoader.Configuration, multi: CurlMulti) {
        guard let handle = multi.takeHandle() else { return nil }
        self.handle = handle
        self.attempt = attempt
        self.multi = multi
        maximumRedirects = configuration.loading.maximumRedirects
        maximumBodySize = configuration.loading.maximumBodySize
        requestURLText = Array(attempt.request.url.absoluteString.utf8CString)
        policy = configuration.addressPolicy
        follows = configuration.loading.maximumRedirects > 0
        idleTimeout = configuration.loading.idleTimeout
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        configure(handle, request: attempt.request, configuration: configuration)
    }

    /// Hands the attempt to the multi thread.
    func start() { multi.add(self) }

    /// Removes the attempt from the multi thread at once (idempotent).
    func cancel() { multi.remove(self) }

    deinit {
        close()
        errorBuffer.deallocate()
    }

    /// Frees the handle and its lists (on the multi thread once it was added).
    func close() {
        if let handle { multi.recycle(handle) }
        handle = nil
        curl_slist_free_all(headerList)
        headerList = nil
        curl_slist_free_all(resolveList)
        resolveList = nil
    }

    private func configure(
        _ h: UnsafeMutableRawPointer, request: DataRequest, configuration: CurlDataLoader.Configuration
    ) {
        let loading = configuration.loading
        let context = Unmanaged.passUnretained(self).toOpaque()
        requestURLText.withUnsafeBufferPointer { _ = imago_easy_setopt_string(h, CURLOPT_URL, $0.baseAddress) }
        _ = imago_easy_setopt_long(h, CURLOPT_NOSIGNAL, 1)
        // 256 KB reads instead of 16 KB, as the curl tool does (100 KB): fewer syscalls and callbacks per image.
        _ = imago_easy_setopt_long(h, CURLOPT_BUFFERSIZE, 256 << 10)
        _ = imago_easy_setopt_pointer(h, CURLOPT_ERRORBUFFER, errorBuffer)
        let schemes = loading.acceptedSchemes.intersection(["http", "https"]).sorted().joined(separator: ",")
        _ = imago_easy_setopt_string(h, CURLOPT_PROTOCOLS_STR, schemes.isEmpty ? "https" : schemes)
        _ = imago_easy_setopt_string(h, CURLOPT_REDIR_PROTOCOLS_STR, schemes.isEmpty ? "https" : schemes)
        _ = imago_easy_setopt_long(h, CURLOPT_FOLLOWLOCATION, follows ? 1 : 0)
        _ = imago_easy_setopt_long(h, CURLOPT_MAXREDIRS, loading.maximumRedirects)
        // Decodes gzip/deflate/br/zstd bodies; the body limit is applied to the decoded bytes as they arrive.
        _ = imago_easy_setopt_string(h, CURLOPT_ACCEPT_ENCODING, "")
        _ = imago_easy_setopt_off(h, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(loading.maximumBodySize))
        // Timeouts: connect and total here; idle by the multi thread (`idleDeadline`): curl's low-speed check
        // averages over seconds, so a stall was only noticed ~5 s late.
        _ = imago_easy_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(configuration.connectTimeout))
        _ = imago_easy_setopt_long(h, CURLOPT_TIMEOUT_MS, Self.milliseconds(loading.resourceTimeout))
        if configuration.idleConnectionLifetime <= .zero {
            _ = imago_easy_setopt_long(h, CURLOPT_FORBID_REUSE, 1)
        } else {
            let seconds = (Self.milliseconds(configuration.idleConnectionLifetime) + 999) / 1000
            _ = imago_easy_setopt_long(h, CURLOPT_MAXAGE_CONN, seconds)
        }
        // HTTP/2 where TLS offers it; wait for a connection that can multiplex rather than opening another.
        switch configuration.httpVersion {
        case .http2OverTLS:
            _ = imago_easy_setopt_long(h, CURLOPT_HTTP_VERSION, imago_http_version_2tls)
            // (not for plain http: there it would wait for a busy HTTP/1.1 connection instead of opening one)
            if request.url.scheme?.lowercased() == "https" { _ = imago_easy_setopt_long(h, CURLOPT_PIPEWAIT, 1) }
        case .http1_1:
            _ = imago_easy_setopt_long(h, CURLOPT_HTTP_VERSION, imago_http_version_1_1)
        }
        // TLS: verification always on.
        configuration.tls.apply(to: h)
        switch configuration.proxy {
        case .environment: break
        case .none: _ = imago_easy_setopt_string(h, CURLOPT_PROXY, "")
        case .url(let proxy): _ = imago_easy_setopt_string(h, CURLOPT_PROXY, proxy)
        }
        for entry in configuration.resolveOverrides { resolveList = curl_slist_append(resolveList, entry.curlEntry) }
        if let resolveList { _ = imago_easy_setopt_slist(h, CURLOPT_RESOLVE, resolveList) }
        // Request headers: the configuration's, the request's (winning), the validators.
        var fields: [(String, String)] = []
        let given = Set(request.headers.keys.map { $0.lowercased() })
        for (name, value) in loading.defaultHeaders where !given.contains(name.lowercased()) {
            fields.append((name, value))
        }
        fields += request.headers.map { ($0.key, $0.value) }
        if let validators = request.validators {
            if let etag = validators.etag { fields.append(("If-None-Match", etag)) }
            if let date = validators.lastModified { fields.append(("If-Modified-Since", date)) }
        }
        // AWS Signature Version 4 for the hosts a signing names: curl signs host, x-amz-date and every field.
        // A signed request follows no redirect: curl would carry its custom fields (a session token among them)
        // to whatever host the answer names.
        let isSigned =
            configuration.awsSigning.contains { $0.signs(request.url) }
            || configuration.azureSigning.contains { $0.signs(request.url) }
        if isSigned { _ = imago_easy_setopt_long(h, CURLOPT_FOLLOWLOCATION, 0) }
        if let signing = configuration.awsSigning.first(where: { $0.signs(request.url) }) {
            let credentials = signing.signingCredentials
            fields += signing.headerFields(for: credentials).filter { !given.contains($0.0) }
            _ = imago_easy_setopt_string(h, CURLOPT_AWS_SIGV4, signing.curlProvider)
            _ = imago_easy_setopt_string(h, CURLOPT_USERNAME, credentials.accessKeyID)
            _ = imago_easy_setopt_string(h, CURLOPT_PASSWORD, credentials.secretAccessKey)
        }
        // Azure Shared Key over the final fields (curl adds none the string-to-sign covers).
        if let signing = configuration.azureSigning.first(where: { $0.signs(request.url) }) {
            fields.removeAll { AzureSharedKeySigning.isReplaced($0.0) }
            fields += signing.signatureFields(method: "GET", url: request.url, fields: fields, date: Date())
        }
        for (name, value) in fields {
            // A header line must not carry a line break (request smuggling); such a field is dropped.
            guard !name.contains(where: \.isNewline), !value.contains(where: \.isNewline) else { continue }
            headerList = curl_slist_append(headerList, value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if let headerList { _ = imago_easy_setopt_slist(h, CURLOPT_HTTPHEADER, headerList) }
        _ = imago_easy_setopt_pointer(h, CURLOPT_HEADERDATA, context)
        _ = imago_easy_setopt_headerfunction(h, curlHeaderCallback)
        _ = imago_easy_setopt_pointer(h, CURLOPT_WRITEDATA, context)
        _ = imago_easy_setopt_writefunction(h, curlWriteCallback)
        if policy.mode != .any {
            _ = imago_easy_setopt_pointer(h, CURLOPT_OPENSOCKETDATA, context)
            _ = imago_easy_setopt_opensocketfunction(h, curlOpenSocketCallback)
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        max(1, Int((duration.timeInterval * 1000).rounded(.up)))
    }

    // MARK: - Callbacks (multi thread)

    /// One header line, parsed as bytes (no Foundation string work: this runs for every line of every response).
    fileprivate func didReceiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        lastActivity = .now
        var end = line.count
        while end > 0, Self.isSpace(line[end - 1]) { end -= 1 }  // CR LF and trailing blanks
        if end == 0 { return didReachEndOfHead() }
        if end >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {
            headers = [:]  // "HTTP/": a new response (1xx, a redirect hop, the final one)
            location = nil
            return true
        }
        guard let colon = line[..<end].firstIndex(of: 0x3A) else { return true }
        var nameEnd = colon
        while nameEnd > 0, Self.isSpace(line[nameEnd - 1]) { nameEnd -= 1 }
        var valueStart = colon + 1
        while valueStart < end, Self.isSpace(line[valueStart]) { valueStart += 1 }
        let name = String(unsafeUninitializedCapacity: nameEnd) { out in
            for i in 0..<nameEnd {
                let byte = line[i]
                out[i] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            }
            return nameEnd
        }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[valueStart..<end]), as: UTF8.self)
        if let existing = headers[name] { headers[name] = existing + ", " + value } else { headers[name] = value }
        if name == "location" { location = value }
        return true
    }

    @inline(__always) private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    private func didReachEndOfHead() -> Bool {
        guard let handle, !isHeadDelivered else { return true }  // trailers after the body
        var code = 0
        _ = imago_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        if (100..<200).contains(code) { return true }
        if follows, (300..<400).contains(code), location != nil { return true }  // curl follows it
        isHeadDelivered = true
        var length: curl_off_t = -1
        _ = imago_easy_getinfo_off(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        let head = Head(status: code, headers: headers, contentLength: Int64(length), url: effectiveURL(handle))
        return attempt.didReceiveHead(head)
    }

    fileprivate func didReceive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        lastActivity = .now
        return attempt.didReceive(bytes)
    }

    fileprivate func openSocket(
        _ purpose: curlsocktype, _ address: UnsafeMutablePointer<curl_sockaddr>
    ) -> curl_socket_t {
        let family = address.pointee.family
        let raw = UnsafeMutableRawPointer(address).advanced(by: MemoryLayout<curl_sockaddr>.offset(of: \.addr) ?? 16)
        var ip: IPAddress?
        if family == AF_INET {
            let sin = raw.assumingMemoryBound(to: sockaddr_in.self).pointee
            ip = .v4(UInt32(bigEndian: sin.sin_addr.s_addr))
        } else if family == AF_INET6 {
            var sin6 = raw.assumingMemoryBound(to: sockaddr_in6.self).pointee
            ip = IPAddress(bytes: withUnsafeBytes(of: &sin6.sin6_addr) { Array($0) })
        }
        let host = handle.flatMap { effectiveURL($0)?.host }
        guard let ip, policy.permits(ip, host: host) else {
            refusal = (host ?? "?", ip?.description ?? "family \(family)")
            return imago_socket_bad
        }
        return socket(family, address.pointee.socktype, address.pointee.protocol)
    }

    /// The URL curl is at; the request's own `URL` when it did not move (parsing a URL is not free).
    private func effectiveURL(_ handle: UnsafeMutableRawPointer) -> URL? {
        var pointer: UnsafeMutablePointer<CChar>?
        guard imago_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &pointer) == CURLE_OK, let pointer else {
            return nil
        }
        if strcmp(pointer, requestURLText) == 0 { return attempt.request.url }
        return URL(string: String(cString: pointer))
    }

    /// Reads the attempt's timings, version and peer (multi thread, before ``close()``).
    private func collectMetrics() -> TransferMetrics? {
        guard let handle else { return nil }
        func phase(_ info: CURLINFO) -> Duration? {
            var value: curl_off_t = 0
            guard imago_easy_getinfo_off(handle, info, &value) == CURLE_OK, value > 0 else { return nil }
            return .microseconds(value)
        }
        func long(_ info: CURLINFO) -> Int {
            var value = 0
            _ = imago_easy_getinfo_long(handle, info, &value)
            return value
        }
        let version: TransferMetrics.HTTPVersion =
            switch long(CURLINFO_HTTP_VERSION) {
            case CURL_HTTP_VERSION_1_0: .http1_0
            case CURL_HTTP_VERSION_1_1: .http1_1
            case CURL_HTTP_VERSION_2_0: .http2
            case CURL_HTTP_VERSION_3: .http3
            default: .unknown
            }
        var ip: UnsafeMutablePointer<CChar>?
        _ = imago_easy_getinfo_string(handle, CURLINFO_PRIMARY_IP, &ip)
        let port = long(CURLINFO_PRIMARY_PORT)
        return TransferMetrics(
            nameLookup: phase(CURLINFO_NAMELOOKUP_TIME_T), connect: phase(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: phase(CURLINFO_APPCONNECT_TIME_T), firstByte: phase(CURLINFO_STARTTRANSFER_TIME_T),
            total: phase(CURLINFO_TOTAL_TIME_T) ?? .zero, httpVersion: version,
            remoteAddress: ip.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 },
            remotePort: port > 0 ? port : nil, redirectCount: long(CURLINFO_REDIRECT_COUNT),
            reusedConnection: long(CURLINFO_NUM_CONNECTS) == 0)
    }

    /// How the attempt ended with `code`: read on the multi thread before ``close()`` (timings, final URL).
    func outcome(code: CURLcode) -> Outcome {
        let message = String(cString: errorBuffer)
        return Outcome(
            code: code, message: message.isEmpty ? String(cString: curl_easy_strerror(code)) : message,
            metrics: collectMetrics(), finalURL: handle.flatMap { effectiveURL($0) }, refusal: refusal,
            redirectTarget: location.flatMap { URL(string: $0) })
    }

    /// Tells the attempt how it ended (multi thread, after the handle was freed).
    func report(_ outcome: Outcome) {
        attempt.didFinish(result(of: outcome))
    }

    /// A curl result as the coordinator takes it.
    func result(of outcome: Outcome) -> LoadTransportResult {
        let url = attempt.request.url
        let metrics = outcome.metrics
        if let refusal = outcome.refusal, outcome.code == CURLE_COULDNT_CONNECT {
            return .failed(.addressRefused(host: refusal.host, address: refusal.address), metrics: metrics)
        }
        switch outcome.code {
        case CURLE_OK: return .completed(finalURL: outcome.finalURL, metrics: metrics)
        case CURLE_OPERATION_TIMEDOUT: return .failed(.timedOut(url: url), metrics: metrics)
        case CURLE_TOO_MANY_REDIRECTS:
            return .failed(.tooManyRedirects(url: url, limit: maximumRedirects), metrics: metrics)
        case CURLE_UNSUPPORTED_PROTOCOL:
            return .failed(.unsupportedScheme(url: outcome.redirectTarget ?? url), metrics: metrics)
        case CURLE_FILESIZE_EXCEEDED: return .failed(.bodyTooLarge(url: url, limit: maximumBodySize), metrics: metrics)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE:
            return .failed(.tlsRefused(url: outcome.redirectTarget ?? url, reason: outcome.message), metrics: metrics)
        case CURLE_URL_MALFORMAT:
            return .failed(.invalidURL(url: outcome.redirectTarget ?? url, reason: outcome.message), metrics: metrics)
        default:
            return .broken(reason: "\(outcome.message) (curl error \(outcome.code.rawValue))", metrics: metrics)
        }
    }
}

// The C callbacks: `userdata` is the CurlEasy (unretained; the multi thread keeps it alive while curl runs it).

private let curlHeaderCallback: imago_data_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return 0 }
    let easy = Unmanaged<CurlEasy>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    return easy.didReceiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: length)) ? length : 0
}

private let curlWriteCallback: imago_data_callback = { buffer, size, count, userdata in
    guard let userdata else { return 0 }
    let easy = Unmanaged<CurlEasy>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    return easy.didReceive(UnsafeRawBufferPointer(start: buffer, count: length)) ? length : 0
}

private let curlOpenSocketCallback: imago_opensocket_callback = { userdata, purpose, address in
    guard let userdata, let address else { return imago_socket_bad }
    let easy = Unmanaged<CurlEasy>.fromOpaque(userdata).takeUnretainedValue()
    return easy.openSocket(purpose, address)
}

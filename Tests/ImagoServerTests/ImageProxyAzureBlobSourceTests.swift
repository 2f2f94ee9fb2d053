import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI

/// `abs://container/blob` sources (`AzureBlobSources`, `--abs`): mapped to the account's Blob service, signed with
/// Azure Storage's Shared Key (computed in ImagoCurl, since libcurl has none), and each signature checked by an
/// independent implementation of Azure's published string-to-sign (Python's `hmac` and `hashlib`) against what the
/// loopback endpoint received.
@Suite("ImageProxy: Azure Blob Storage sources")
struct ImageProxyAzureBlobSourceTests {
    static let account = "devstoreaccount1"
    /// Azurite's well-known development key.
    static let key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

    /// Whether `request` carries a valid Shared Key signature of `account` with `key`, by Python's standard
    /// library; the verifier's complaint when not.
    static func verify(_ request: LoopbackServer.Request, account: String = account, key: String = key) throws -> String
    {
        let script = #"""
            import base64, email.utils, datetime, hashlib, hmac, json, sys, urllib.parse
            req = json.load(sys.stdin)
            account, key = sys.argv[1], base64.b64decode(sys.argv[2])
            headers = {}
            for name, value in req["headers"]:
                headers[name.lower()] = value.strip()
            auth = headers.get("authorization", "")
            if not auth.startswith("SharedKey " + account + ":"):
                sys.exit("no SharedKey Authorization for " + account)
            for required in ("x-ms-date", "x-ms-version"):
                if required not in headers:
                    sys.exit("no " + required)
            sent = email.utils.parsedate_to_datetime(headers["x-ms-date"])
            if abs((datetime.datetime.now(datetime.timezone.utc) - sent).total_seconds()) > 900:
                sys.exit("x-ms-date is not within 15 minutes of now")
            def h(name):
                return headers.get(name, "")
            length = "" if h("content-length") == "0" else h("content-length")
            standard = [req["method"], h("content-encoding"), h("content-language"), length, h("content-md5"),
                        h("content-type"), h("date"), h("if-modified-since"), h("if-match"), h("if-none-match"),
                        h("if-unmodified-since"), h("range")]
            ms = "".join(n + ":" + " ".join(v.split()) + "\n" for n, v in sorted(headers.items()) if n.startswith("x-ms-"))
            resource = "/" + account + req["path"]
            params = {}
            for k, v in urllib.parse.parse_qsl(req["query"] or "", keep_blank_values=True):
                params.setdefault(k.lower(), []).append(v)
            for k in sorted(params):
                resource += "\n" + k + ":" + ",".join(sorted(params[k]))
            to_sign = "\n".join(standard) + "\n" + ms + resource
            expected = base64.b64encode(hmac.new(key, to_sign.encode(), hashlib.sha256).digest()).decode()
            if not hmac.compare_digest(expected, auth.split(":", 1)[1]):
                sys.exit("signature mismatch; string to sign was:\n" + to_sign)
            print("ok")
            """#
        return try python(script, arguments: [account, key], input: verifierInput(request)).output
    }

    /// `imago serve --abs` against `origin` as an Azurite-style endpoint (the account in the path), as the
    /// command wires it: its libcurl loader, its source policy, its stores.
    static func served(origin: LoopbackServer, extra: [String] = ["--abs-key", key]) throws -> ImageProxy {
        try servedProxy(
            ["--abs", "--abs-name", account, "--abs-endpoint", origin.url(for: "/\(account)").absoluteString] + extra)
    }

    @Test(.timeLimit(.minutes(1)))
    func privateBlobsAreFetchedWithSignaturesAnIndependentVerifierAccepts() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let blobPath = "/\(Self.account)/photos/2026%20summer/cat%2B1.jpg"
        origin.setRoute(blobPath, .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let proxy = try Self.served(origin: origin)
        let response = await proxy.respond(
            to: ServerRequest(method: "GET", path: base64Path("rs:fit:64:64", "abs://photos/2026%20summer/cat%2B1.jpg"))
        )
        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(try ServerTestImages.decode(response.body).width == 64)
        let request = try #require(origin.lastRequest(for: blobPath))
        #expect(try Self.verify(request) == "ok")
        // The verifier is not a rubber stamp: another account key fails it.
        #expect(
            try Self.verify(request, key: Data(repeating: 7, count: 64).base64EncodedString()).hasPrefix(
                "signature mismatch"))
    }

    @Test(.timeLimit(.minutes(1)))
    func signaturesCoverConditionalRangeAndXMSFields() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/\(Self.account)/c/a.bin", .bytes(Data(repeating: 1, count: 100)))
        var configuration = CurlDataLoader.Configuration()
        let host = origin.url(for: "/").host() ?? ""
        configuration.azureSigning = [
            try AzureSharedKeySigning(accountName: Self.account, accountKey: Self.key, hosts: [host])
        ]
        let loader = CurlDataLoader(configuration: configuration)
        var request = DataRequest(url: origin.url(for: "/\(Self.account)/c/a.bin"))
        request.headers = ["Range": "bytes=0-9", "x-ms-client-request-id": "  id   42 ", "x-ms-date": "forged"]
        request.validators = HTTPValidators(etag: "\"v1\"", lastModified: "Tue, 01 Dec 2026 10:00:00 GMT")
        _ = try? await loader.data(for: request)
        let sent = try #require(origin.lastRequest(for: "/\(Self.account)/c/a.bin"))
        #expect(sent.headers["If-None-Match"] == "\"v1\"" && sent.headers["Range"] == "bytes=0-9")
        #expect(sent.headers["x-ms-date"] != "forged")
        #expect(try Self.verify(sent) == "ok")

        // Query parameters are part of the signed resource.
        let withQuery = DataRequest(
            url: URL(string: origin.url(for: "/\(Self.account)/c/a.bin").absoluteString + "?snapshot=2&comp=metadata")!)
        _ = try? await loader.data(for: withQuery)
        let queried = try #require(origin.lastRequest(for: "/\(Self.account)/c/a.bin"))
        #expect(queried.query == "snapshot=2&comp=metadata")
        #expect(try Self.verify(queried) == "ok")

        // Another host is never signed.
        var other = CurlDataLoader.Configuration()
        other.azureSigning = [
            try AzureSharedKeySigning(accountName: Self.account, accountKey: Self.key, hosts: ["elsewhere"])
        ]
        _ = try? await CurlDataLoader(configuration: other).data(
            for: DataRequest(url: origin.url(for: "/\(Self.account)/c/a.bin")))
        let unsigned = try #require(origin.lastRequest(for: "/\(Self.account)/c/a.bin"))
        #expect(unsigned.headers["Authorization"] == nil && unsigned.headers["x-ms-date"] == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func withoutAKeyPublicBlobsAreFetchedUnsigned() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/\(Self.account)/public/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let proxy = try Self.served(origin: origin, extra: [])
        let response = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/w:20/plain/abs://public/a.jpg"))
        #expect(response.status == 200, "\(errorMessage(response))")
        let request = try #require(origin.lastRequest(for: "/\(Self.account)/public/a.jpg"))
        #expect(request.headers["Authorization"] == nil)
        let refused = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/w:20/plain/s3://public/a.jpg"))
        #expect(refused.status == 400 && errorMessage(refused).contains("no --s3"))
        let noBlob = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/w:20/plain/abs://public/"))
        #expect(noBlob.status == 400 && errorMessage(noBlob).contains("abs://container/blob"))
    }

    @Test func blobsMapToTheirServicesURLsAndTheCommandChecksItsOptions() throws {
        let azure = AzureBlobSources(accountName: "media")
        #expect(
            azure.httpURL(for: URL(string: "abs://photos/a%20b/c+d.jpg?ignored")!)?.absoluteString
                == "https://media.blob.core.windows.net/photos/a%20b/c%2Bd.jpg")
        #expect(azure.signedHosts == ["media.blob.core.windows.net:443"])
        #expect(azure.httpURL(for: URL(string: "abs://photos/")!) == nil)
        #expect(throws: AzureSharedKeySigning.Error.accountKeyNotBase64) {
            try AzureSharedKeySigning(accountName: "media", accountKey: "not base64!", hosts: [])
        }
        func parse(_ arguments: [String]) throws -> ServeCommand.Options {
            try ServeCommand.parse(
                parseArguments(["--unsigned"] + arguments, options: ServeCommand.command.options), environment: [:])
        }
        let options = try parse(["--abs", "--abs-name", "media", "--abs-key", Self.key])
        #expect(options.azureBlob == azure && options.azureSigning?.hosts == azure.signedHosts)
        #expect(try parse(["--abs", "--abs-name", "media"]).azureSigning == nil)
        for bad in [
            ["--abs"], ["--abs", "--abs-name", "Media"], ["--abs-name", "media"], ["--abs-key", Self.key],
            ["--abs", "--abs-name", "media", "--abs-key", "%%%"],
            ["--abs", "--abs-name", "m", "--abs-endpoint", "ftp://x"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try parse(bad) }
        }
    }
}

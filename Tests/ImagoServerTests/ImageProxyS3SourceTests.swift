import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI

/// `s3://bucket/key` sources (`S3Sources`, `--s3`): mapped to the endpoint, signed by libcurl's Signature Version 4
/// with the headers S3 requires, and each signature checked by an independent implementation (Python's `hmac` and
/// `hashlib`, following AWS's published algorithm) against what the loopback endpoint received.
@Suite("ImageProxy: S3 sources")
struct ImageProxyS3SourceTests {
    static let credentials = AWSSigning.Credentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")

    /// A proxy serving `s3:` sources from `origin` as a path-style endpoint in `eu-west-1`, its libcurl loader
    /// signing with `credentials` (none: unsigned).
    static func proxy(
        origin: LoopbackServer, credentials: AWSSigning.Credentials? = credentials,
        configure: (inout ImageProxy.Configuration) -> Void = { _ in }
    ) throws -> ImageProxy {
        let sources = S3Sources(region: "eu-west-1", endpoint: origin.url(for: "/"))
        var loader = CurlDataLoader.Configuration()
        loader.httpVersion = .http1_1
        if let credentials {
            loader.awsSigning = [AWSSigning(credentials: credentials, region: "eu-west-1", hosts: sources.signedHosts)]
        }
        var configuration = ImageProxy.Configuration(dataLoader: CurlDataLoader(configuration: loader))
        configuration.allowsUnsigned = true
        configuration.sourcePolicy = SourcePolicy(allowsPrivateAddresses: true)
        configuration.s3 = sources
        configure(&configuration)
        return ImageProxy(configuration: configuration)
    }

    /// Whether `request` carries a valid Signature Version 4 for `secret`, by Python's standard library; the
    /// verifier's complaint when not. S3's requests must sign `x-amz-content-sha256` (the empty body's hash);
    /// other services' (STS) sign the hash of the body they carry.
    static func verify(_ request: LoopbackServer.Request, secret: String) throws -> String {
        let script = #"""
            import base64, hashlib, hmac, json, sys, urllib.parse
            req = json.load(sys.stdin)
            secret = sys.argv[1]
            headers = {}
            for name, value in req["headers"]:
                headers.setdefault(name.lower(), []).append(" ".join(value.split()))
            auth = headers.get("authorization", [""])[0]
            if not auth.startswith("AWS4-HMAC-SHA256 "):
                sys.exit("no AWS4-HMAC-SHA256 Authorization header")
            parts = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
            key_id, date, region, service, terminal = parts["Credential"].split("/")
            if terminal != "aws4_request":
                sys.exit("bad credential scope")
            signed = parts["SignedHeaders"].split(";")
            for required in ("host", "x-amz-date") + (("x-amz-content-sha256",) if service == "s3" else ()):
                if required not in signed:
                    sys.exit("unsigned " + required)
            body = base64.b64decode(req["body"])
            payload = hashlib.sha256(body).hexdigest()
            if "x-amz-content-sha256" in headers and headers["x-amz-content-sha256"][0] != payload:
                sys.exit("x-amz-content-sha256 is not the body's hash")
            def enc(text):
                return urllib.parse.quote(text, safe="-_.~")
            pairs = urllib.parse.parse_qsl(req["query"] or "", keep_blank_values=True)
            query = "&".join(enc(k) + "=" + enc(v) for k, v in sorted(pairs))
            canonical_headers = "".join(n + ":" + ",".join(headers[n]) + "\n" for n in signed)
            canonical = "\n".join([req["method"], req["path"], query, canonical_headers, ";".join(signed), payload])
            stamp = headers["x-amz-date"][0]
            scope = "/".join([date, region, service, terminal])
            to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
            def h(key, msg):
                return hmac.new(key, msg.encode(), hashlib.sha256).digest()
            k = h(h(h(h(("AWS4" + secret).encode(), date), region), service), terminal)
            expected = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, parts["Signature"]):
                sys.exit("signature mismatch; canonical request was:\n" + canonical)
            print("ok " + key_id + " " + region + " " + service)
            """#
        return try python(script, arguments: [secret], input: verifierInput(request)).output
    }

    @Test(.timeLimit(.minutes(1)))
    func privateObjectsAreFetchedWithSignaturesAnIndependentVerifierAccepts() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let jpeg = try ServerTestImages.jpeg()
        // The key "photos 2026/cat+1.jpg" of bucket "media", as Signature Version 4 encodes it in the path.
        let objectPath = "/media/photos%202026/cat%2B1.jpg"
        origin.setRoute(objectPath, .bytes(jpeg, contentType: "image/jpeg"))
        origin.setRoute("/media/plain.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        let proxy = try Self.proxy(origin: origin)

        let response = await proxy.respond(
            to: ServerRequest(method: "GET", path: base64Path("rs:fit:64:64", "s3://media/photos%202026/cat%2B1.jpg")))
        #expect(response.status == 200, "\(errorMessage(response))")
        let image = try ServerTestImages.decode(response.body)
        #expect(image.width == 64 && image.height == 32)
        let request = try #require(origin.lastRequest(for: objectPath))
        #expect(
            try Self.verify(request, secret: Self.credentials.secretAccessKey) == "ok AKIAIOSFODNN7EXAMPLE eu-west-1 s3"
        )
        // The verifier is not a rubber stamp: another secret fails it.
        #expect(try Self.verify(request, secret: "not-the-secret").hasPrefix("signature mismatch"))

        // The plain form, and a version: the query becomes versionId, inside the signature.
        let versioned = await proxy.respond(
            to: ServerRequest(method: "GET", path: "/_/w:20/plain/s3://media/plain.jpg%3F3HL4kqtJlcpXroDTDmJ%2Bq"))
        #expect(versioned.status == 200, "\(errorMessage(versioned))")
        let versionRequest = try #require(origin.lastRequest(for: "/media/plain.jpg"))
        #expect(versionRequest.query == "versionId=3HL4kqtJlcpXroDTDmJ%2Bq")
        #expect(try Self.verify(versionRequest, secret: Self.credentials.secretAccessKey).hasPrefix("ok "))
    }

    @Test(.timeLimit(.minutes(1)))
    func imagoServeSignsWithTheCredentialsOfItsEnvironment() async throws {
        let executable = try #require(imagoExecutable(), "build the imago executable first (swift build)")
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/media/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("imago-s3-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try ServeProcess(
            executable,
            [
                "--listen", "127.0.0.1:0", "--unsigned", "--allow-private", "--s3", "--s3-region", "eu-west-1",
                "--s3-endpoint", origin.url(for: "/").absoluteString,
            ], in: directory,
            environment: [
                "AWS_ACCESS_KEY_ID": Self.credentials.accessKeyID,
                "AWS_SECRET_ACCESS_KEY": Self.credentials.secretAccessKey,
            ])
        defer { serve.terminate() }
        let port = try #require(await serve.listeningPort())
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/_/w:20/f:png/plain/s3://media/a.jpg"))
        let response = try await TestHTTPClient().send(url)
        #expect(response.status == 200)
        #expect(try ServerTestImages.decode(response.body).width == 20)
        let request = try #require(origin.lastRequest(for: "/media/a.jpg"))
        #expect(
            try Self.verify(request, secret: Self.credentials.secretAccessKey) == "ok AKIAIOSFODNN7EXAMPLE eu-west-1 s3"
        )
    }

    @Test(.timeLimit(.minutes(1)))
    func temporaryCredentialsSignTheirSessionToken() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/media/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        var credentials = Self.credentials
        credentials.sessionToken = "FwoGZXIvYXdzEXAMPLETOKEN"
        let proxy = try Self.proxy(origin: origin, credentials: credentials)
        let response = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/w:20/plain/s3://media/a.jpg"))
        #expect(response.status == 200, "\(errorMessage(response))")
        let request = try #require(origin.lastRequest(for: "/media/a.jpg"))
        #expect(request.headers["x-amz-security-token"] == "FwoGZXIvYXdzEXAMPLETOKEN")
        #expect(request.headers["Authorization"]?.contains("x-amz-security-token") == true)
        #expect(try Self.verify(request, secret: credentials.secretAccessKey).hasPrefix("ok "))
    }

    @Test(.timeLimit(.minutes(1)))
    func aSignedRequestFollowsNoRedirectSoItsTokenStaysHome() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let elsewhere = try LoopbackServer()
        defer { elsewhere.stop() }
        elsewhere.setRoute("/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        origin.setRoute("/media/a.jpg", .redirect(to: elsewhere.url(for: "/a.jpg").absoluteString))
        var credentials = Self.credentials
        credentials.sessionToken = "FwoGZXIvYXdzEXAMPLETOKEN"
        let proxy = try Self.proxy(origin: origin, credentials: credentials)
        let response = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/w:20/plain/s3://media/a.jpg"))
        #expect(response.status != 200)
        #expect(origin.requestCount(for: "/media/a.jpg") >= 1)
        #expect(elsewhere.requestCount(for: "/a.jpg") == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func withoutCredentialsPublicObjectsAreFetchedUnsigned() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/public/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let proxy = try Self.proxy(origin: origin, credentials: nil)
        let response = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/w:20/plain/s3://public/a.jpg"))
        #expect(response.status == 200, "\(errorMessage(response))")
        let request = try #require(origin.lastRequest(for: "/public/a.jpg"))
        #expect(request.headers["Authorization"] == nil && request.headers["x-amz-content-sha256"] == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func missingObjectsBadURLsAndOtherBucketsAreTheClientsFault() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/media/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let proxy = try Self.proxy(origin: origin) { $0.sourcePolicy.allowedHosts = ["media"] }
        let missing = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/plain/s3://media/none.jpg"))
        #expect(missing.status == 404)
        let noKey = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/plain/s3://media/"))
        #expect(noKey.status == 400 && errorMessage(noKey).contains("s3://bucket/key"))
        // A bucket no store names is the client's mistake, named before any request (a legacy Media_1 is a name)
        let badBucket = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/plain/s3://me!dia/a.jpg"))
        #expect(badBucket.status == 400)
        #expect(errorMessage(badBucket).contains("the bucket name me!dia holds '!'"), "\(errorMessage(badBucket))")
        let legacy = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/plain/s3://Media_1/a.jpg"))
        #expect(legacy.status == 403)
        let other = await proxy.respond(to: ServerRequest(method: "GET", path: "/_/plain/s3://secrets/a.jpg"))
        #expect(other.status == 403)
        #expect(origin.requestCount(for: "/secrets/a.jpg") == 0)

        // Without S3 sources configured, s3: URLs are refused before any load.
        let fixture = try ProxyFixture()
        let refused = await fixture.get("/_/plain/s3://media/a.jpg")
        #expect(refused.status == 400 && errorMessage(refused).contains("no --s3"))
    }

    /// imgproxy's `IMGPROXY_S3_ACCESS_POINTS`: a bucket's objects through an access point, signed for its region.
    @Test func accessPointsAddressAndSignTheirBuckets() throws {
        let arn = "arn:aws:s3:us-west-2:123456789012:accesspoint/photos-ap"
        let point = try #require(S3AccessPoint(arn: arn))
        #expect(point.host == "photos-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com" && point.arn == arn)
        #expect(S3AccessPoint(arn: "arn:aws:s3:us-west-2:123456789012:accesspoint:photos-ap") == point)
        #expect(
            S3AccessPoint(arn: "arn:aws-cn:s3:cn-north-1:123456789012:accesspoint/cnap")?.host
                == "cnap-123456789012.s3-accesspoint.cn-north-1.amazonaws.com.cn")
        for bad in [
            "arn:aws:s3::123456789012:accesspoint/mrap.mrap",  // Multi-Region: SigV4A
            "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-1/accesspoint/ap",
            "arn:aws:s3-object-lambda:us-west-2:123456789012:accesspoint/ap",
            "arn:aws:s3:us-west-2:1234:accesspoint/ap",
            "arn:aws:s3:us-west-2:123456789012:bucket/ap", "arn:aws:s3:us-west-2:123456789012:accesspoint/Ap",
            "arn:aws:s3:us-west-2:123456789012:accesspoint/ab", "arn:other:s3:us-west-2:123456789012:accesspoint/ap",
            "photos-ap",
        ] {
            #expect(S3AccessPoint(arn: bad) == nil, "\(bad)")
        }
        var sources = S3Sources(region: "eu-west-1")
        sources.accessPoints = ["media": point, "archive": point]
        #expect(
            sources.httpURL(for: URL(string: "s3://media/a%20b/c+d.jpg?v1")!)?.absoluteString
                == "https://photos-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com/a%20b/c%2Bd.jpg?versionId=v1")
        #expect(
            sources.httpURL(for: URL(string: "s3://other/x.jpg")!)?.absoluteString
                == "https://other.s3.eu-west-1.amazonaws.com/x.jpg", "a bucket without one")
        #expect(sources.accessPointSigningHosts == ["us-west-2": [point.host]])
        // The command line: repeatable, AWS's endpoints only; each region gets a signing of its own
        func parse(_ extra: [String]) throws -> ServeCommand.Options {
            try ServeCommand.parse(
                parseArguments(
                    ["--unsigned", "--s3", "--s3-region", "eu-west-1"] + extra,
                    options: ServeCommand.command.options),
                environment: ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"])
        }
        let options = try parse([
            "--s3-access-point", "media=" + arn,
            "--s3-access-point", "logs=arn:aws:s3:ap-south-1:123456789012:accesspoint/logs",
        ])
        #expect(options.s3?.accessPoints["media"] == point && options.s3?.accessPoints.count == 2)
        let loader = try #require(ServeCommand.makeSourceLoader(options) as? CurlDataLoader)
        let signings = loader.configuration.awsSigning.map { "\($0.region) \($0.hosts)" }
        #expect(
            signings == [
                "eu-west-1 [\"*.s3.eu-west-1.amazonaws.com\", \"s3.eu-west-1.amazonaws.com\"]",
                "ap-south-1 [\"logs-123456789012.s3-accesspoint.ap-south-1.amazonaws.com\"]",
                "us-west-2 [\"photos-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com\"]",
            ])
        for bad in [
            ["--s3-access-point", "media"], ["--s3-access-point", "media=arn:aws:s3::123456789012:accesspoint/m.mrap"],
            ["--s3-access-point", "media=" + arn, "--s3-endpoint", "http://minio:9000"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try parse(bad) }
        }
    }

    @Test func objectsMapToTheirEndpointsURLs() throws {
        let aws = S3Sources(region: "eu-west-1")
        #expect(
            aws.httpURL(for: URL(string: "s3://media/a%20b/c+d.jpg?v%2F1")!)?.absoluteString
                == "https://media.s3.eu-west-1.amazonaws.com/a%20b/c%2Bd.jpg?versionId=v%2F1")
        // Dotted buckets are addressed path-style, which the TLS wildcard certificate covers.
        #expect(
            aws.httpURL(for: URL(string: "s3://my.media/x.jpg")!)?.absoluteString
                == "https://s3.eu-west-1.amazonaws.com/my.media/x.jpg")
        #expect(aws.signedHosts == ["*.s3.eu-west-1.amazonaws.com", "s3.eu-west-1.amazonaws.com"])
        #expect(aws.httpURL(for: URL(string: "s3://media/")!) == nil)
        #expect(aws.httpURL(for: URL(string: "https://media/a.jpg")!) == nil)

        let minio = S3Sources(region: "us-east-1", endpoint: S3Sources.endpoint(parsing: "minio:9000"))
        #expect(
            minio.httpURL(for: URL(string: "s3://media/a.jpg")!)?.absoluteString == "http://minio:9000/media/a.jpg")
        #expect(minio.signedHosts == ["minio:9000"])
        let virtual = S3Sources(
            endpoint: S3Sources.endpoint(parsing: "https://storage.example.com/s3/"), usesPathStyle: false)
        #expect(
            virtual.httpURL(for: URL(string: "s3://media/a.jpg")!)?.absoluteString
                == "https://media.storage.example.com/s3/a.jpg")
        #expect(virtual.signedHosts == ["*.storage.example.com"])
        #expect(S3Sources.endpoint(parsing: "ftp://minio") == nil)
        #expect(S3Sources.endpoint(parsing: "http://minio:9000/?x=1") == nil)
    }

    @Test func signingCoversOnlyItsHosts() {
        let signing = AWSSigning(
            credentials: Self.credentials, region: "eu-west-1", hosts: ["*.s3.eu-west-1.amazonaws.com", "minio:9000"])
        #expect(signing.signs(URL(string: "https://media.s3.eu-west-1.amazonaws.com/a.jpg")!))
        #expect(!signing.signs(URL(string: "https://s3.eu-west-1.amazonaws.com/a.jpg")!))  // not below the domain
        #expect(!signing.signs(URL(string: "https://evil.example/media.s3.eu-west-1.amazonaws.com")!))
        #expect(!signing.signs(URL(string: "https://media.s3.eu-west-1.amazonaws.com.evil.example/a.jpg")!))
        #expect(signing.signs(URL(string: "http://MINIO:9000/media/a.jpg")!))
        #expect(!signing.signs(URL(string: "http://minio:9001/media/a.jpg")!))
        #expect(!signing.signs(URL(string: "ftp://minio:9000/media/a.jpg")!))
        #expect(
            AWSSigning.Credentials(environment: ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s"])
                == AWSSigning.Credentials(accessKeyID: "AKID", secretAccessKey: "s"))
        #expect(AWSSigning.Credentials(environment: ["AWS_ACCESS_KEY_ID": "AKID"]) == nil)
    }

    @Test func theServeCommandWiresS3FromItsOptionsAndTheEnvironment() throws {
        func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ServeCommand.Options {
            try ServeCommand.parse(
                parseArguments(["--unsigned"] + arguments, options: ServeCommand.command.options),
                environment: environment.merging(quietCloudEnvironment) { given, _ in given })
        }
        #expect(try parse([]).s3 == nil)
        let environment = [
            "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token",
            "AWS_REGION": "ap-south-1",
        ]
        let options = try parse(["--s3"], environment)
        #expect(options.s3?.region == "ap-south-1" && options.s3?.endpoint == nil)
        #expect(
            options.s3Credentials
                == .fixed(AWSSigning.Credentials(accessKeyID: "AKID", secretAccessKey: "secret", sessionToken: "token"))
        )
        #expect(options.s3?.credentials?.source == options.s3Credentials)
        let minio = try parse(["--s3", "--s3-region", "us-east-1", "--s3-endpoint", "127.0.0.1:9000"])
        #expect(minio.s3?.endpoint?.absoluteString == "http://127.0.0.1:9000" && minio.s3?.usesPathStyle == true)
        #expect(minio.s3Credentials == nil)
        #expect(
            try parse(["--s3", "--s3-endpoint", "https://s.example", "--s3-virtual-hosted"]).s3?.usesPathStyle == false)
        #expect(try parse(["--s3"], ["IMAGO_S3_REGION": "eu-north-1"]).s3?.region == "eu-north-1")
        for bad in [
            ["--s3-region", "eu-west-1"], ["--s3-endpoint", "http://minio"], ["--s3", "--s3-endpoint", "ftp://x"],
            ["--s3", "--s3-virtual-hosted"], ["--s3", "--s3-region", "eu west"],
        ] {
            #expect(throws: UsageError.self) { try parse(bad) }
        }
    }
}

import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI
@testable import ImagoCurl
@testable import ImagoServer

/// `gs://bucket/object` sources (`GoogleCloudStorageSources`, `--gcs`): a service account's RS256 assertion
/// (checked by OpenSSL's command-line tool, an independent implementation) traded at a loopback token endpoint for
/// a bearer token that every object request carries.
@Suite("ImageProxy: Google Cloud Storage sources")
struct ImageProxyGCSSourceTests {
    /// Runs `/usr/bin/openssl` with `arguments`; its status and standard output and error.
    static func openssl(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A service account key made for the run (RSA 2048, by openssl) for `tokenURI`: its JSON and the path of
    /// its public key.
    static func makeKey(
        tokenURI: URL, algorithm: [String] = ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
    )
        throws -> (json: Data, publicKey: String, directory: URL)
    {
        let directory = try makeTemporaryDirectory("gcs")
        let privatePath = directory.appendingPathComponent("key.pem").path
        let publicPath = directory.appendingPathComponent("public.pem").path
        #expect(try openssl(["genpkey"] + algorithm + ["-out", privatePath]).status == 0)
        #expect(try openssl(["pkey", "-in", privatePath, "-pubout", "-out", publicPath]).status == 0)
        let key: [String: String] = [
            "type": "service_account", "project_id": "imago-test", "private_key_id": "kid-1",
            "private_key": try String(contentsOfFile: privatePath, encoding: .utf8),
            "client_email": "reader@imago-test.iam.gserviceaccount.com", "token_uri": tokenURI.absoluteString,
        ]
        return (try JSONSerialization.data(withJSONObject: key), publicPath, directory)
    }

    /// openssl's verdict on the RS256 signature of `jwt` under the public key at `publicKey`.
    static func verify(_ jwt: String, publicKey: String, in directory: URL) throws -> String {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return "not a JWT" }
        let input = directory.appendingPathComponent("input")
        let signature = directory.appendingPathComponent("signature")
        try Data((parts[0] + "." + parts[1]).utf8).write(to: input)
        try #require(base64URLDecoded(String(parts[2]))).write(to: signature)
        return try openssl(["dgst", "-sha256", "-verify", publicKey, "-signature", signature.path, input.path]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func base64URLDecoded(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    @Test(.timeLimit(.minutes(1)))
    func assertionsAreRS256JWTsThatOpenSSLVerifies() throws {
        let tokenURI = URL(string: "https://oauth2.example.test/token")!
        let key = try Self.makeKey(tokenURI: tokenURI)
        defer { try? FileManager.default.removeItem(at: key.directory) }
        let account = try GoogleServiceAccount(json: key.json)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let jwt = try account.assertion(scope: "https://www.googleapis.com/auth/devstorage.read_only", now: now)

        #expect(try Self.verify(jwt, publicKey: key.publicKey, in: key.directory) == "Verified OK")
        let parts = jwt.split(separator: ".").map(String.init)
        let header = try JSONSerialization.jsonObject(with: #require(Self.base64URLDecoded(parts[0]))) as? [String: Any]
        #expect(header?["alg"] as? String == "RS256" && header?["kid"] as? String == "kid-1")
        let claims = try JSONSerialization.jsonObject(with: #require(Self.base64URLDecoded(parts[1]))) as? [String: Any]
        #expect(claims?["iss"] as? String == "reader@imago-test.iam.gserviceaccount.com")
        #expect(claims?["aud"] as? String == tokenURI.absoluteString)
        #expect(claims?["scope"] as? String == "https://www.googleapis.com/auth/devstorage.read_only")
        #expect(claims?["iat"] as? Int == 1_800_000_000 && claims?["exp"] as? Int == 1_800_003_600)
        // The verifier is not a rubber stamp: a changed claim fails it.
        let forged = parts[0] + "." + parts[1].dropLast() + "A." + parts[2]
        #expect(try Self.verify(forged, publicKey: key.publicKey, in: key.directory) != "Verified OK")

        // Keys that are not service-account RSA keys are typed errors, and their text never repeats the key.
        let ec = try Self.makeKey(
            tokenURI: tokenURI, algorithm: ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        defer { try? FileManager.default.removeItem(at: ec.directory) }
        for bad in [Data("not json".utf8), Data("{}".utf8), Data(#"{"type":"authorized_user"}"#.utf8), ec.json] {
            #expect(throws: GoogleServiceAccount.Error.self) { try GoogleServiceAccount(json: bad) }
        }
        do {
            _ = try GoogleServiceAccount(json: ec.json)
        } catch {
            #expect(!"\(error)".contains("PRIVATE KEY") && "\(error)".contains("RSA"), "\(error)")
        }
    }

    /// A loopback origin whose `/token` answers the token exchange with `status` and `body` after `delay`, and a
    /// service account key made for it; stopped and removed when released.
    final class TokenOrigin: Sendable {
        let origin: LoopbackServer
        let key: (json: Data, publicKey: String, directory: URL)

        init(status: Int = 200, body: String, delay: Double = 0) throws {
            origin = try LoopbackServer()
            key = try ImageProxyGCSSourceTests.makeKey(tokenURI: origin.url(for: "/token"))
            origin.setRoute(
                "/token",
                .handler { request in
                    guard request.method == "POST" else { return LoopbackServer.Response(status: 405) }
                    if delay > 0 { Thread.sleep(forTimeInterval: delay) }
                    return LoopbackServer.Response(
                        status: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
                })
        }

        deinit {
            origin.stop()
            try? FileManager.default.removeItem(at: key.directory)
        }

        /// `imago serve --gcs` with this key and this origin as the endpoint.
        func proxy() throws -> ImageProxy {
            try servedProxy([
                "--gcs", "--gcs-key", String(decoding: key.json, as: UTF8.self), "--gcs-endpoint",
                origin.url(for: "/").absoluteString,
            ])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func privateObjectsAreFetchedWithTheServiceAccountsBearerToken() async throws {
        let fixture = try TokenOrigin(
            body: #"{"access_token":"ya29.test-token","expires_in":3599,"token_type":"Bearer"}"#)
        let (origin, key) = (fixture.origin, fixture.key)
        let objectPath = "/media/photos/2026%20summer/cat%2B1.jpg"
        origin.serveJPEG(try ServerTestImages.jpeg(), at: objectPath, toBearer: { "ya29.test-token" })
        let proxy = try fixture.proxy()

        // Two outputs of the object: each fetched with the token, which was exchanged once
        for size in [64, 32] {
            let response = await proxy.respond(
                to: ServerRequest(
                    method: "GET",
                    path: base64Path("rs:fit:\(size):\(size)", "gs://media/photos/2026%20summer/cat%2B1.jpg"))
            )
            #expect(response.status == 200, "\(errorMessage(response))")
            #expect(try ServerTestImages.decode(response.body).width == size)
        }
        #expect(origin.requestCount(for: objectPath) == 2)
        #expect(origin.requestCount(for: "/token") == 1)
        // The exchange was the JWT bearer grant with an assertion OpenSSL verifies
        let exchange = try #require(origin.lastRequest(for: "/token"))
        let form = String(decoding: exchange.body, as: UTF8.self)
        #expect(exchange.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(form.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
        let assertion = String(form.split(separator: "=").last ?? "")
        #expect(try Self.verify(assertion, publicKey: key.publicKey, in: key.directory) == "Verified OK")

        // A missing object is the origin's 404; a generation is passed as a query
        let missing = await proxy.respond(
            to: ServerRequest(method: "GET", path: base64Path("w:10", "gs://media/none.jpg")))
        #expect(missing.status == 404, "\(errorMessage(missing))")
        _ = await proxy.respond(
            to: ServerRequest(method: "GET", path: base64Path("w:11", "gs://media/g.jpg?1700000000")))
        #expect(origin.lastRequest(for: "/media/g.jpg")?.query == "generation=1700000000")
    }

    @Test(.timeLimit(.minutes(1)))
    func loadsAskingAtOnceShareOneExchange() async throws {
        // A slow exchange, so that every caller arrives during it
        let fixture = try TokenOrigin(body: #"{"access_token":"shared","expires_in":3600}"#, delay: 0.3)
        let (origin, key) = (fixture.origin, fixture.key)
        let tokens = GoogleAccessTokens(account: try GoogleServiceAccount(json: key.json))
        let fields = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await tokens.authorization() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(fields.count == 20 && Set(fields) == ["Bearer shared"])
        #expect(origin.requestCount(for: "/token") == 1 && tokens.exchangeCount == 1)
        // Kept: a later call exchanges nothing
        #expect(try await tokens.authorization() == "Bearer shared" && origin.requestCount(for: "/token") == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func aRevokedTokenIsExchangedAgainAndTheLoadTriedOnceMore() async throws {
        // A token endpoint that issues token-1, token-2 …, and objects served only to the newest
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let key = try Self.makeKey(tokenURI: origin.url(for: "/token"))
        defer { try? FileManager.default.removeItem(at: key.directory) }
        let issued = Locked(0)
        origin.setRoute(
            "/token",
            .handler { _ in
                let token = "token-\(issued.withLock { $0 += 1; return $0 })"
                return LoopbackServer.Response(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Data(#"{"access_token":"\#(token)","expires_in":3600}"#.utf8))
            })
        origin.serveJPEG(try ServerTestImages.jpeg(), at: "/media/a.jpg", toBearer: { "token-\(issued.value)" })
        let tokens = GoogleAccessTokens(account: try GoogleServiceAccount(json: key.json))
        let loader = ObjectStoreLoader(
            stores: [GoogleCloudStorageSources(endpoint: origin.url(for: "/"), tokens: tokens)],
            remote: CurlDataLoader())
        func load() async -> DataLoadEvent? {
            await lastEvent(loading: URL(string: "gs://media/a.jpg")!, through: loader)
        }
        guard case .finished = await load() else {
            Issue.record("the first load failed")
            return
        }
        // Another exchange (another server of the fleet) makes token-1 stale: refused, exchanged again, loaded
        _ = try await GoogleAccessTokens(account: try GoogleServiceAccount(json: key.json)).authorization()
        guard case .finished = await load() else {
            Issue.record("the load after the refusal failed")
            return
        }
        #expect(tokens.exchangeCount == 2 && origin.requestCount(for: "/token") == 3)
        #expect(origin.requestCount(for: "/media/a.jpg") == 3)  // 200, 401, 200
    }

    @Test(.timeLimit(.minutes(1)))
    func aLoadCancelledWhileItsTokenIsExchangedEndsAtOnceAndAsksNothing() async throws {
        let fixture = try TokenOrigin(body: #"{"access_token":"late","expires_in":3600}"#, delay: 1)
        let (origin, key) = (fixture.origin, fixture.key)
        origin.setRoute("/media/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let store = GoogleCloudStorageSources(
            endpoint: origin.url(for: "/"),
            tokens: GoogleAccessTokens(account: try GoogleServiceAccount(json: key.json)))
        let loader = ObjectStoreLoader(stores: [store], remote: CurlDataLoader())
        let events = Locked<[DataLoadEvent]>([])
        let started = ContinuousClock.now
        let task = loader.load(DataRequest(url: URL(string: "gs://media/a.jpg")!)) { event in
            events.withLock { $0.append(event) }
        }
        #expect(await ImagoTesting.eventually { origin.requestCount(for: "/token") == 1 })
        task.cancel()
        #expect(await ImagoTesting.eventually { events.value.count == 1 })
        guard case .failed(.cancelled) = events.value.first else {
            Issue.record("expected .failed(.cancelled), got \(events.value)")
            return
        }
        #expect(ContinuousClock.now - started < .seconds(1))  // not after the exchange
        try await Task.sleep(for: .milliseconds(1500))  // the exchange ends; nothing follows it
        #expect(events.value.count == 1 && origin.requestCount(for: "/media/a.jpg") == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func aRefusedTokenExchangeIsA502AndTheObjectIsNotAsked() async throws {
        let fixture = try TokenOrigin(status: 400, body: #"{"error":"invalid_grant"}"#)
        let origin = fixture.origin
        origin.setRoute("/media/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let proxy = try fixture.proxy()
        let response = await proxy.respond(
            to: ServerRequest(method: "GET", path: base64Path("w:10", "gs://media/a.jpg")))
        #expect(response.status == 502, "\(errorMessage(response))")
        #expect(origin.requestCount(for: "/media/a.jpg") == 0)
        #expect(!errorMessage(response).contains("eyJ"))  // no assertion in the answer
    }

    @Test(.timeLimit(.minutes(1)))
    func publicObjectsGoUnsignedAndTheFlagsAndKeyFileAreChecked() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute("/public/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let proxy = try servedProxy(["--gcs", "--gcs-endpoint", origin.url(for: "/").absoluteString])
        let response = await proxy.respond(
            to: ServerRequest(method: "GET", path: base64Path("w:10", "gs://public/a.jpg")))
        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(origin.lastRequest(for: "/public/a.jpg")?.headers["Authorization"] == nil)

        let without = try servedProxy([])
        let refused = await without.respond(
            to: ServerRequest(method: "GET", path: base64Path("w:10", "gs://public/a.jpg")))
        #expect(refused.status == 400 && errorMessage(refused).contains("--gcs"), "\(errorMessage(refused))")

        // The key file GOOGLE_APPLICATION_CREDENTIALS names, when --gcs-key is not given
        let key = try Self.makeKey(tokenURI: origin.url(for: "/token"))
        defer { try? FileManager.default.removeItem(at: key.directory) }
        let file = key.directory.appendingPathComponent("key.json")
        try key.json.write(to: file)
        let options = try parseArguments(["--gcs"], options: ServeCommand.command.options)
        let fromEnvironment = try ServeCommand.parseGCS(
            options, environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
        #expect(fromEnvironment?.tokens?.account?.clientEmail == "reader@imago-test.iam.gserviceaccount.com")
        #expect(try ServeCommand.parseGCS(options, environment: ["NO_GCE_CHECK": "1"])?.tokens == nil)
        #expect(throws: UsageError.self) {
            try ServeCommand.parseGCS(options, environment: ["GOOGLE_APPLICATION_CREDENTIALS": "/no/such/key.json"])
        }
        for bad in [
            ["--gcs-key", "{}"], ["--gcs-endpoint", "http://x"],
            ["--gcs", "--gcs-key", #"{"type":"authorized_user"}"#],
            ["--gcs", "--gcs-key", "/no/such/key.json"], ["--gcs", "--gcs-endpoint", "ftp://x"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try servedProxy(bad) }
        }
    }

    /// A loopback metadata server: `/computeMetadata/v1/instance/service-accounts/default/token` answers `body`
    /// (with `Metadata-Flavor: Google` when `flavored`) only to requests that carry `Metadata-Flavor: Google`.
    static func serveMetadata(on origin: LoopbackServer, body: String, flavored: Bool = true) {
        origin.setRoute(
            "/computeMetadata/v1/instance/service-accounts/default/token",
            .handler { request in
                guard request.method == "GET", request.headers["Metadata-Flavor"] == "Google" else {
                    return LoopbackServer.Response(status: 403)
                }
                var headers: LoopbackServer.Headers = ["Content-Type": "application/json"]
                if flavored { headers["Metadata-Flavor"] = "Google" }
                return LoopbackServer.Response(status: 200, headers: headers, body: Data(body.utf8))
            })
    }

    @Test(.timeLimit(.minutes(1)))
    func onGoogleCloudTheMetadataServersTokenAuthorizesWithNoKeyGiven() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        Self.serveMetadata(
            on: origin, body: #"{"access_token":"ya29.instance","expires_in":3599,"token_type":"Bearer"}"#)
        let jpeg = try ServerTestImages.jpeg()
        origin.serveJPEG(jpeg, at: "/media/a.jpg", toBearer: { "ya29.instance" })
        let host = "127.0.0.1:\(try #require(origin.url(for: "/").port))"
        let proxy = try servedProxy(
            ["--gcs", "--gcs-endpoint", origin.url(for: "/").absoluteString], environment: ["GCE_METADATA_HOST": host])
        for size in [40, 20] {
            let response = await proxy.respond(
                to: ServerRequest(method: "GET", path: base64Path("w:\(size)", "gs://media/a.jpg")))
            #expect(response.status == 200, "\(errorMessage(response))")
            #expect(try ServerTestImages.decode(response.body).width == size)
        }
        let tokenPath = "/computeMetadata/v1/instance/service-accounts/default/token"
        #expect(origin.requestCount(for: tokenPath) == 1 && origin.requestCount(for: "/media/a.jpg") == 2)
        #expect(
            origin.lastRequest(for: tokenPath)?.query
                == "scopes=https://www.googleapis.com/auth/devstorage.read_only"
                || origin.lastRequest(for: tokenPath)?.query
                    == "scopes=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fdevstorage.read_only"
        )

        // Something at that address that is not a metadata server (no Metadata-Flavor in its answer) is a 502,
        // and the object is not asked for.
        let impostor = try LoopbackServer()
        defer { impostor.stop() }
        Self.serveMetadata(on: impostor, body: #"{"access_token":"stolen","expires_in":3599}"#, flavored: false)
        impostor.setRoute("/media/a.jpg", .bytes(jpeg, contentType: "image/jpeg"))
        let refused = try servedProxy(
            ["--gcs", "--gcs-endpoint", impostor.url(for: "/").absoluteString],
            environment: ["GCE_METADATA_HOST": "127.0.0.1:\(try #require(impostor.url(for: "/").port))"])
        let response = await refused.respond(
            to: ServerRequest(method: "GET", path: base64Path("w:10", "gs://media/a.jpg")))
        #expect(response.status == 502, "\(errorMessage(response))")
        #expect(impostor.requestCount(for: "/media/a.jpg") == 0)
        do {
            _ = try await GoogleAccessTokens(credentials: .metadataServer(impostor.url(for: "/"))).authorization()
            Issue.record("the impostor's token was taken")
        } catch {
            #expect("\(error)".contains("Metadata-Flavor") && !"\(error)".contains("stolen"), "\(error)")
        }
    }

    /// imgproxy's `IMGPROXY_ENV_GCP_SECRET_*`: a Secret Manager secret's `.env` text, read at start with the
    /// metadata server's token, set over the environment before the options are read.
    @Test(.timeLimit(.minutes(1)))
    func settingsKeptInSecretManagerAreReadAtStart() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        Self.serveMetadata(on: origin, body: #"{"access_token":"ya29.secrets","expires_in":3599}"#)
        let text = "IMAGO_MAX_AGE=99\nIMAGO_KEY=0011\nIMAGO_SALT=22\n"
        origin.setRoute(
            "/v1/projects/imago-prod/secrets/imago-env/versions/latest:access",
            .handler { request in
                guard request.headers["Authorization"] == "Bearer ya29.secrets" else {
                    return LoopbackServer.Response(
                        status: 403, body: Data(#"{"error":{"status":"PERMISSION_DENIED"}}"#.utf8))
                }
                let body =
                    #"{"name":"projects/1/secrets/imago-env/versions/3","payload":{"data":"\#(Data(text.utf8).base64EncodedString())"}}"#
                return LoopbackServer.Response(
                    status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
            })
        let host = "127.0.0.1:\(origin.url(for: "/").port ?? 0)"
        let environment = ["GCE_METADATA_HOST": host, "GOOGLE_CLOUD_PROJECT": "imago-prod", "HOME": "/nonexistent"]
        let args = try parseArguments(
            ["--env-gcp-secret-id", "imago-env", "--env-gcp-secret-endpoint", origin.url(for: "/").absoluteString],
            options: ServeCommand.command.options)
        let found = try await ServeCommand.cloudEnvironment(args, over: environment)
        #expect(found["IMAGO_MAX_AGE"] == "99" && found["GCE_METADATA_HOST"] == host)
        let options = try ServeCommand.parse(args, environment: found)
        #expect(options.maxAge == 99 && options.signer != nil)
        // A secret the account may not read: the status Google gave; no project: a usage error before any call
        let other = try parseArguments(
            ["--env-gcp-secret-id", "other", "--env-gcp-secret-endpoint", origin.url(for: "/").absoluteString],
            options: ServeCommand.command.options)
        do {
            _ = try await ServeCommand.cloudEnvironment(other, over: environment)
            Issue.record("a secret with no route was read")
        } catch {
            #expect("\(error)".contains("HTTP 404"), "\(error)")
        }
        var noProject = environment
        noProject["GOOGLE_CLOUD_PROJECT"] = nil
        await #expect(throws: UsageError.self) { try await ServeCommand.cloudEnvironment(args, over: noProject) }
        let orphan = try parseArguments(["--env-gcp-key", "{}"], options: ServeCommand.command.options)
        await #expect(throws: UsageError.self) { try await ServeCommand.cloudEnvironment(orphan, over: environment) }
        #expect(
            GoogleConfigurationSecret(project: "p 1", secret: "s/x", version: "2").accessURL.absoluteString
                == "https://secretmanager.googleapis.com/v1/projects/p%201/secrets/s%2Fx/versions/2:access")
    }

    @Test(.timeLimit(.minutes(1)))
    func gcloudsUserCredentialsTradeTheirRefreshToken() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute(
            "/token",
            .handler { request in
                let form = String(decoding: request.body, as: UTF8.self)
                guard request.method == "POST",
                    form
                        == "grant_type=refresh_token&client_id=client-1.apps&client_secret=s%26cret&refresh_token=1%2F%2Frefresh"
                else { return LoopbackServer.Response(status: 400, body: Data(#"{"error":"invalid_grant"}"#.utf8)) }
                return LoopbackServer.Response(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Data(#"{"access_token":"ya29.user","expires_in":3599}"#.utf8))
            })
        origin.serveJPEG(try ServerTestImages.jpeg(), at: "/media/a.jpg", toBearer: { "ya29.user" })
        // gcloud's file in HOME/.config/gcloud, as `gcloud auth application-default login` writes it
        let home = try makeTemporaryDirectory("home")
        defer { try? FileManager.default.removeItem(at: home) }
        let gcloud = home.appending(path: ".config/gcloud")
        try FileManager.default.createDirectory(at: gcloud, withIntermediateDirectories: true)
        let user: [String: String] = [
            "type": "authorized_user", "client_id": "client-1.apps", "client_secret": "s&cret",
            "refresh_token": "1//refresh", "token_uri": origin.url(for: "/token").absoluteString,
        ]
        try JSONSerialization.data(withJSONObject: user).write(
            to: gcloud.appending(path: "application_default_credentials.json"))
        let proxy = try servedProxy(
            ["--gcs", "--gcs-endpoint", origin.url(for: "/").absoluteString],
            environment: ["HOME": home.path, "NO_GCE_CHECK": "true"])
        let response = await proxy.respond(
            to: ServerRequest(method: "GET", path: base64Path("w:10", "gs://media/a.jpg")))
        #expect(response.status == 200, "\(errorMessage(response))")
        #expect(origin.requestCount(for: "/token") == 1 && origin.requestCount(for: "/media/a.jpg") == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func applicationDefaultCredentialsAreSearchedInGooglesOrder() throws {
        let directory = try makeTemporaryDirectory("adc")
        defer { try? FileManager.default.removeItem(at: directory) }
        let gcloud = directory.appending(path: "gcloud")
        try FileManager.default.createDirectory(at: gcloud, withIntermediateDirectories: true)
        let key = try Self.makeKey(tokenURI: URL(string: "https://oauth2.example.test/token")!)
        defer { try? FileManager.default.removeItem(at: key.directory) }
        let keyFile = directory.appending(path: "key.json")
        try key.json.write(to: keyFile)
        let userJSON = Data(#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r"}"#.utf8)
        try userJSON.write(to: gcloud.appending(path: "application_default_credentials.json"))
        let google = directory.appending(path: "product_google")
        try Data("Google Compute Engine\n".utf8).write(to: google)
        let other = directory.appending(path: "product_other")
        try Data("Standard PC (Q35 + ICH9, 2009)\n".utf8).write(to: other)
        let missing = directory.appending(path: "no_such_file")
        func found(_ environment: [String: String], product: URL = missing) throws -> GoogleCredentials? {
            try GoogleCredentials.applicationDefault(environment: environment, productNameFile: product)
        }

        let account = try GoogleServiceAccount(json: key.json)
        let user = GoogleCredentials.authorizedUser(
            clientID: "c", clientSecret: "s", refreshToken: "r", tokenURI: GoogleCredentials.defaultTokenURI)
        let everything = [
            "GOOGLE_APPLICATION_CREDENTIALS": keyFile.path, "CLOUDSDK_CONFIG": gcloud.path,
            "GCE_METADATA_HOST": "metadata.google.internal",
        ]
        #expect(try found(everything, product: google) == .serviceAccount(account))
        var rest = everything
        rest["GOOGLE_APPLICATION_CREDENTIALS"] = nil
        #expect(try found(rest, product: google) == user)
        // HOME/.config/gcloud when CLOUDSDK_CONFIG is not set
        let home = directory.appending(path: "home")
        try FileManager.default.createDirectory(at: home.appending(path: ".config"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: gcloud, to: home.appending(path: ".config/gcloud"))
        #expect(try found(["HOME": home.path]) == user)
        rest["CLOUDSDK_CONFIG"] = nil
        #expect(try found(rest) == .metadataServer(URL(string: "http://metadata.google.internal")!))
        // The product name alone says Google; NO_GCE_CHECK and other machines say nothing
        #expect(try found([:], product: google) == .metadataServer(GoogleCredentials.defaultMetadataServer))
        #expect(try found(["NO_GCE_CHECK": "True"], product: google) == nil)
        #expect(try found([:], product: other) == nil && found([:]) == nil)
        #expect(
            GoogleCredentials.metadataServer(URL(string: "http://169.254.169.254")!).tokenURL(scope: "a b")
                .absoluteString
                == "http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/token?scopes=a%20b")

        // Unusable files and hosts are typed errors that name no secret
        for bad in [
            ["GOOGLE_APPLICATION_CREDENTIALS": missing.path], ["GCE_METADATA_HOST": "http://x/y"],
            ["GOOGLE_APPLICATION_CREDENTIALS": other.path],
        ] {
            #expect(throws: GoogleServiceAccount.Error.self, "\(bad)") { try found(bad) }
        }
        let external = Data(#"{"type":"external_account","audience":"//iam"}"#.utf8)
        let secretless = Data(#"{"type":"authorized_user","client_id":"c","client_secret":"hush"}"#.utf8)
        for json in [external, secretless] {
            do {
                _ = try GoogleCredentials(json: json)
                Issue.record("accepted \(String(decoding: json, as: UTF8.self))")
            } catch {
                #expect(!"\(error)".contains("hush"), "\(error)")
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aTokenWithLessThanTwiceTheMarginLeftIsKeptForHalfItsLife() async throws {
        // A metadata server hands out a token with 2 minutes left (under the 5-minute margin): it is kept, not
        // exchanged again for every load.
        let origin = try LoopbackServer()
        defer { origin.stop() }
        Self.serveMetadata(on: origin, body: #"{"access_token":"short","expires_in":120}"#)
        let tokens = GoogleAccessTokens(credentials: .metadataServer(origin.url(for: "/")))
        for _ in 0..<3 { #expect(try await tokens.authorization() == "Bearer short") }
        #expect(tokens.exchangeCount == 1)
    }
}

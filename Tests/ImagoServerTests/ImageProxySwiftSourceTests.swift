import Foundation
import Imago
import ImagoTesting
import Testing

@testable import ImagoCLI
@testable import ImagoCurl
@testable import ImagoServer

/// `swift://container/object` sources (`OpenStackSwiftSources`, `--swift`): a loopback identity service (Keystone
/// v3 and v2, Swift's v1 auth) hands out numbered tokens and the storage URL, and a loopback storage under it
/// serves objects only to the token last issued.
@Suite("ImageProxy: OpenStack Swift sources")
struct ImageProxySwiftSourceTests {
    /// The identity service and the storage, on one loopback server: every sign-in issues `token-N`, and the
    /// storage accepts only the newest (so a token issued before another is refused with 401, as a revoked one).
    final class SwiftOrigin: Sendable {
        let origin: LoopbackServer
        let issued = Locked(0)
        static let key = "s3cr3t-key"

        init() throws {
            origin = try LoopbackServer()
            let storage = origin.url(for: "/swift/v1/AUTH_imago").absoluteString
            let issued = issued
            @Sendable func issue() -> String {
                "token-"
                    + String(
                        issued.withLock {
                            $0 += 1; return $0
                        })
            }
            origin.setRoute(
                "/v3/auth/tokens",
                .handler { request in
                    guard request.method == "POST",
                        let body = try? JSONDecoder().decode(V3Request.self, from: request.body),
                        body.auth.identity.password.user.password == Self.key
                    else { return LoopbackServer.Response(status: 401) }
                    let answer = """
                        {"token":{"expires_at":"2099-01-01T00:00:00.000000Z","catalog":[
                        {"type":"identity","endpoints":[{"interface":"public","url":"http://127.0.0.1:1/v3"}]},
                        {"type":"object-store","endpoints":[{"interface":"internal","url":"http://10.0.0.1/x"},
                        {"interface":"public","url":"\(storage)"}]}]}}
                        """
                    return LoopbackServer.Response(
                        status: 201, headers: ["X-Subject-Token": issue(), "Content-Type": "application/json"],
                        body: Data(answer.utf8))
                })
            origin.setRoute(
                "/v2.0/tokens",
                .handler { request in
                    guard request.method == "POST", String(decoding: request.body, as: UTF8.self).contains(Self.key)
                    else { return LoopbackServer.Response(status: 401) }
                    let answer = """
                        {"access":{"token":{"id":"\(issue())","expires":"2099-01-01T00:00:00Z"},
                        "serviceCatalog":[{"type":"object-store","endpoints":[{"publicURL":"\(storage)"}]}]}}
                        """
                    return LoopbackServer.Response(
                        status: 200, headers: ["Content-Type": "application/json"], body: Data(answer.utf8))
                })
            origin.setRoute(
                "/auth/v1.0",
                .handler { request in
                    guard request.headers["X-Auth-User"] == "reader", request.headers["X-Auth-Key"] == Self.key else {
                        return LoopbackServer.Response(status: 401)
                    }
                    return LoopbackServer.Response(
                        status: 200, headers: ["X-Auth-Token": issue(), "X-Storage-Url": storage])
                })
        }

        deinit { origin.stop() }

        /// Serves `bytes` at `container/object` to the newest token only.
        func store(_ bytes: Data, at path: String) {
            let issued = issued
            origin.setRoute(
                "/swift/v1/AUTH_imago/" + path,
                .handler { request in
                    let newest = "token-" + String(issued.withLock { $0 })
                    return request.headers["X-Auth-Token"] == newest
                        ? LoopbackServer.Response(status: 200, headers: ["Content-Type": "image/jpeg"], body: bytes)
                        : LoopbackServer.Response(status: 401)
                })
        }

        func credentials(_ path: String, version: Int = 0, key: String = key) -> OpenStackCredentials {
            OpenStackCredentials(
                authURL: origin.url(for: path), username: "reader", apiKey: key, domain: "imago", tenant: "media",
                authVersion: version)
        }
    }

    /// What the v3 sign-in must send.
    struct V3Request: Decodable {
        struct Auth: Decodable {
            struct Identity: Decodable {
                struct Password: Decodable {
                    struct User: Decodable {
                        var name: String
                        var password: String
                        var domain: [String: String]
                    }
                    var user: User
                }
                var methods: [String]
                var password: Password
            }
            struct Scope: Decodable {
                struct Project: Decodable {
                    var name: String
                    var domain: [String: String]
                }
                var project: Project
            }
            var identity: Identity
            var scope: Scope?
        }
        var auth: Auth
    }

    @Test(.timeLimit(.minutes(1)))
    func objectsAreFetchedFromTheStorageURLWithTheKeystoneV3Token() async throws {
        let fixture = try SwiftOrigin()
        let origin = fixture.origin
        fixture.store(try ServerTestImages.jpeg(), at: "photos/2026%20summer/cat.jpg")
        let proxy = try servedProxy([
            "--swift", "--swift-auth-url", origin.url(for: "/v3").absoluteString, "--swift-username", "reader",
            "--swift-api-key", SwiftOrigin.key, "--swift-domain", "imago", "--swift-tenant", "media",
        ])
        for size in [64, 32] {
            let response = await proxy.respond(
                to: ServerRequest(
                    method: "GET", path: base64Path("rs:fit:\(size)", "swift://photos/2026 summer/cat.jpg")))
            #expect(response.status == 200, "\(errorMessage(response))")
            #expect(try ServerTestImages.decode(response.body).width == size)
        }
        #expect(origin.requestCount(for: "/v3/auth/tokens") == 1)
        #expect(origin.requestCount(for: "/swift/v1/AUTH_imago/photos/2026%20summer/cat.jpg") == 2)
        // The sign-in: the password method, the user and the project in the domain given
        let signIn = try JSONDecoder().decode(
            V3Request.self, from: #require(origin.lastRequest(for: "/v3/auth/tokens")).body)
        #expect(signIn.auth.identity.methods == ["password"] && signIn.auth.identity.password.user.name == "reader")
        #expect(signIn.auth.identity.password.user.domain == ["name": "imago"])
        #expect(signIn.auth.scope?.project.name == "media" && signIn.auth.scope?.project.domain == ["name": "imago"])
        // A missing object is the storage's 404; a source without an object is refused before any fetch
        origin.setRoute("/swift/v1/AUTH_imago/photos/none.jpg", .status(404))
        let missing = await proxy.respond(
            to: ServerRequest(method: "GET", path: base64Path("w:10", "swift://photos/none.jpg")))
        #expect(missing.status == 404, "\(errorMessage(missing))")
        let bare = await proxy.respond(to: ServerRequest(method: "GET", path: base64Path("w:10", "swift://photos")))
        #expect(bare.status == 400 && errorMessage(bare).contains("swift://container/object"), "\(errorMessage(bare))")
    }

    @Test(.timeLimit(.minutes(1)))
    func aRefusedTokenIsDroppedAndTheLoadTriedOnceMoreWithANewOne() async throws {
        let fixture = try SwiftOrigin()
        let origin = fixture.origin
        fixture.store(try ServerTestImages.jpeg(), at: "photos/a.jpg")
        let tokens = OpenStackTokens(credentials: fixture.credentials("/v3"))
        // The loader alone, so that nothing between the loads is cached
        let loader = ObjectStoreLoader(stores: [OpenStackSwiftSources(tokens: tokens)], remote: CurlDataLoader())
        func load() async -> DataLoadEvent? {
            await lastEvent(loading: URL(string: "swift://photos/a.jpg")!, through: loader)
        }
        guard case .finished = await load() else { Issue.record("the first load failed"); return }
        // Someone else signs in: token-1 is no longer accepted; the next load is refused, signs in, succeeds
        _ = try await OpenStackTokens(credentials: fixture.credentials("/v3")).session()
        guard case .finished = await load() else { Issue.record("the load after the refusal failed"); return }
        #expect(tokens.exchangeCount == 2 && origin.requestCount(for: "/v3/auth/tokens") == 3)
        #expect(origin.requestCount(for: "/swift/v1/AUTH_imago/photos/a.jpg") == 3)  // 200, 401, 200
        // Refused again right after a new sign-in: tried once more only, then the 401 fails the load
        origin.setRoute("/swift/v1/AUTH_imago/photos/a.jpg", .status(401))
        guard case .failed(.statusCode(401, _)) = await load() else { Issue.record("expected a 401"); return }
        #expect(tokens.exchangeCount == 3)
    }

    @Test(.timeLimit(.minutes(1)))
    func keystoneV2AndSwiftV1SignInsGiveTheTokenAndStorageURL() async throws {
        let fixture = try SwiftOrigin()
        let storage = fixture.origin.url(for: "/swift/v1/AUTH_imago")
        for (path, version) in [("/v2.0", 0), ("/auth/v1.0", 0), ("/v2.0", 2), ("/auth/v1.0", 1)] {
            let session = try await OpenStackTokens(credentials: fixture.credentials(path, version: version)).session()
            #expect(session.storageURL == storage && session.token.hasPrefix("token-"), "\(path)")
        }
        // Sign-ins asking at once share one exchange, and the session is kept
        let tokens = OpenStackTokens(credentials: fixture.credentials("/auth/v1.0"))
        let sessions = try await withThrowingTaskGroup(of: OpenStackTokens.Session.self) { group in
            for _ in 0..<20 { group.addTask { try await tokens.session() } }
            return try await group.reduce(into: Set<OpenStackTokens.Session>()) { $0.insert($1) }
        }
        #expect(sessions.count == 1 && tokens.exchangeCount == 1)
        _ = try await tokens.session()
        #expect(tokens.exchangeCount == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func aRefusedSignInIsA502ThatNeverShowsTheKey() async throws {
        let fixture = try SwiftOrigin()
        fixture.store(try ServerTestImages.jpeg(), at: "photos/a.jpg")
        let proxy = try servedProxy([
            "--swift", "--swift-auth-url", fixture.origin.url(for: "/v3").absoluteString, "--swift-username", "reader",
            "--swift-api-key", "wrong-key-4711",
        ])
        let response = await proxy.respond(
            to: ServerRequest(method: "GET", path: base64Path("w:10", "swift://photos/a.jpg")))
        #expect(response.status == 502, "\(errorMessage(response))")
        #expect(!errorMessage(response).contains("wrong-key-4711"))
        #expect(fixture.origin.requestCount(for: "/swift/v1/AUTH_imago/photos/a.jpg") == 0)
        do {
            _ = try await OpenStackTokens(credentials: fixture.credentials("/v3", key: "wrong-key-4711")).session()
            Issue.record("a refused sign-in gave a session")
        } catch {
            #expect("\(error)".contains("HTTP 401") && !"\(error)".contains("wrong-key-4711"), "\(error)")
        }
        #expect(!"\(fixture.credentials("/v3"))".contains(SwiftOrigin.key))
    }

    @Test func theFlagsAreChecked() throws {
        func parse(_ arguments: [String]) throws -> OpenStackSwiftSources? {
            try ServeCommand.parseSwift(parseArguments(arguments, options: ServeCommand.command.options))
        }
        #expect(try parse([]) == nil)
        let full = [
            "--swift", "--swift-auth-url", "https://keystone.example/v3", "--swift-username", "u", "--swift-api-key",
            "k",
        ]
        let sources = try #require(try parse(full))
        #expect(sources.tokens.credentials.resolvedVersion == 3 && sources.scheme == "swift")
        #expect(sources.httpURL(for: URL(string: "swift://c/a%20b/c.jpg")!)?.relativeString == "c/a%20b/c.jpg")
        for bad in [
            ["--swift-tenant", "t"],  // needs --swift
            ["--swift", "--swift-username", "u", "--swift-api-key", "k"],  // no auth URL
            Array(full.prefix(5)),  // no key
            [
                "--swift", "--swift-auth-url", "https://keystone.example/identity", "--swift-username", "u",
                "--swift-api-key", "k",
            ],
            full + ["--swift-auth-version", "4"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") { try parse(bad) }
        }
        // A URL that names no version, with the version given
        let named = [
            "--swift", "--swift-username", "u", "--swift-api-key", "k", "--swift-auth-url",
            "https://k.example/identity",
            "--swift-auth-version", "3",
        ]
        #expect(try parse(named)?.tokens.credentials.resolvedVersion == 3)
        // --allow-source takes swift: prefixes
        #expect(throws: Never.self) {
            try ServeCommand.parse(
                parseArguments(
                    ["--unsigned", "--allow-source", "swift://photos/"], options: ServeCommand.command.options),
                environment: [:])
        }
    }
}

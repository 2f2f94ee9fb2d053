import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI
@testable import ImagoCurl

/// `abs:` sources authorized with Entra ID bearer tokens from the credentials `DefaultAzureCredential` would find
/// (`AzureCredentials`): a client secret, an AKS workload identity, a managed identity through the instance metadata
/// service or App Service's endpoint, each played by a loopback server.
@Suite("ImageProxy: Azure credentials from the default chain")
struct ImageProxyAzureCredentialTests {
    /// A loopback Blob service with `media/a.jpg` answered only to `Bearer TOKEN` with an `x-ms-version`, and the
    /// proxy `imago serve --abs` makes for it in `environment`.
    static func serve(
        _ origin: LoopbackServer, environment: [String: String], token: @escaping @Sendable () -> String
    ) throws -> ImageProxy {
        origin.serveJPEG(
            try ServerTestImages.jpeg(), at: "/devstoreaccount1/media/a.jpg", toBearer: token,
            requiring: ["x-ms-version"])
        var given = quietCloudEnvironment.merging(environment) { _, given in given }
        if environment["AZURE_TOKEN_CREDENTIALS"] == nil { given["AZURE_TOKEN_CREDENTIALS"] = nil }
        return try servedProxy(
            [
                "--abs", "--abs-name", "devstoreaccount1", "--abs-endpoint",
                origin.url(for: "/devstoreaccount1").absoluteString,
            ], environment: given)
    }

    /// Loads of the blob at two widths: both answered.
    static func expectLoads(_ proxy: ImageProxy) async throws {
        for width in [20, 10] {
            let response = await proxy.respond(
                to: ServerRequest(method: "GET", path: "/_/w:\(width)/f:png/plain/abs://media/a.jpg"))
            #expect(response.status == 200, "\(errorMessage(response))")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aManagedIdentitysTokenFromTheMetadataServiceAuthorizesAndARefusedOneIsRenewed() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        // Tokens numbered as they are issued; the Blob service takes only token-2, so the first is refused once.
        let issued = Locked(0)
        origin.setRoute(
            "/metadata/identity/oauth2/token",
            .handler { request in
                guard request.headers["Metadata"] == "true" else { return LoopbackServer.Response(status: 400) }
                let token = "token-\(issued.withLock { $0 += 1; return $0 })"
                return LoopbackServer.Response(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Data(#"{"access_token":"\#(token)","expires_in":"86399","token_type":"Bearer"}"#.utf8))
            })
        let proxy = try Self.serve(
            origin,
            environment: [
                "AZURE_POD_IDENTITY_AUTHORITY_HOST": origin.url(for: "/").absoluteString, "AZURE_CLIENT_ID": "mi-1",
            ], token: { "token-2" })
        try await Self.expectLoads(proxy)
        let exchange = try #require(origin.lastRequest(for: "/metadata/identity/oauth2/token"))
        let query = exchange.query ?? ""
        #expect(query.contains("api-version=2018-02-01") && query.contains("client_id=mi-1"), "\(query)")
        #expect(query.contains("resource=https"), "\(query)")
        // token-1 refused once, token-2 kept for the second load
        #expect(issued.value == 2 && origin.requestCount(for: "/devstoreaccount1/media/a.jpg") == 3)
    }

    @Test(.timeLimit(.minutes(1)))
    func aClientSecretAndAWorkloadIdentityTradeAtTheTenantsEndpoint() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let tokenPath = "/tenant-1/oauth2/v2.0/token"
        origin.setRoute(
            tokenPath,
            .handler { request in
                let form = request.formFields
                let valid =
                    form["grant_type"] == "client_credentials" && form["client_id"] == "app-1"
                    && form["scope"] == "https://storage.azure.com/.default"
                    && (form["client_secret"] == "s&cret"
                        || (form["client_assertion"] == "federated.jwt"
                            && form["client_assertion_type"]
                                == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"))
                return valid
                    ? LoopbackServer.Response(
                        status: 200,
                        body: Data(#"{"access_token":"entra","expires_in":3599,"token_type":"Bearer"}"#.utf8))
                    : LoopbackServer.Response(status: 400, body: Data(#"{"error":"invalid_client"}"#.utf8))
            })
        let common = [
            "AZURE_TENANT_ID": "tenant-1", "AZURE_CLIENT_ID": "app-1",
            "AZURE_AUTHORITY_HOST": origin.url(for: "/").absoluteString,
        ]
        try await Self.expectLoads(
            try Self.serve(
                origin, environment: common.merging(["AZURE_CLIENT_SECRET": "s&cret"]) { $1 }, token: { "entra" }))
        #expect(origin.requestCount(for: tokenPath) == 1)

        let directory = try makeTemporaryDirectory("azure")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "azure-identity-token")
        try Data("federated.jwt\n".utf8).write(to: file)
        try await Self.expectLoads(
            try Self.serve(
                origin, environment: common.merging(["AZURE_FEDERATED_TOKEN_FILE": file.path]) { $1 },
                token: { "entra" }))
        #expect(origin.requestCount(for: tokenPath) == 2)

        // A refused secret is a 502, the blob not asked for, and the error names the OAuth error, not the secret
        let tokens = AzureAccessTokens(
            credentials: .clientSecret(
                tenantID: "tenant-1", clientID: "app-1", secret: "wrong-secret", authorityHost: origin.url(for: "/")))
        do {
            _ = try await tokens.authorization()
            Issue.record("a refused secret gave a token")
        } catch {
            #expect("\(error)".contains("invalid_client") && !"\(error)".contains("wrong-secret"), "\(error)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func appServiceIsAskedWithItsIdentityHeader() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        origin.setRoute(
            "/msi/token",
            .handler { request in
                request.headers["X-IDENTITY-HEADER"] == "site-secret" && request.query?.contains("2019-08-01") == true
                    ? LoopbackServer.Response(
                        status: 200, body: Data(#"{"access_token":"site","expires_on":"1900000000"}"#.utf8))
                    : LoopbackServer.Response(status: 400)
            })
        try await Self.expectLoads(
            try Self.serve(
                origin,
                environment: [
                    "IDENTITY_ENDPOINT": origin.url(for: "/msi/token").absoluteString, "IDENTITY_HEADER": "site-secret",
                ], token: { "site" }))
        #expect(origin.requestCount(for: "/msi/token") == 1)
    }

    @Test func theDefaultChainIsSearchedInTheSDKsOrder() throws {
        let directory = try makeTemporaryDirectory("azure")
        defer { try? FileManager.default.removeItem(at: directory) }
        let azure = directory.appending(path: "azure_tag")
        try Data("7783-7084-3265-9085-8269-3286-77\n".utf8).write(to: azure)
        let other = directory.appending(path: "other_tag")
        try Data("No Asset Tag\n".utf8).write(to: other)
        let missing = directory.appending(path: "none")
        func found(_ environment: [String: String], tag: URL = missing) throws -> AzureCredentials? {
            try AzureCredentials.default(environment: environment, assetTagFile: tag)
        }
        let authority = AzureCredentials.defaultAuthorityHost
        let everything = [
            "AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "s",
            "AZURE_FEDERATED_TOKEN_FILE": "/var/run/token", "IDENTITY_ENDPOINT": "http://127.0.0.1:4141/msi/token",
            "IDENTITY_HEADER": "h",
        ]
        #expect(
            try found(everything, tag: azure)
                == .clientSecret(tenantID: "t", clientID: "c", secret: "s", authorityHost: authority))
        var rest = everything
        rest["AZURE_CLIENT_SECRET"] = nil
        let workload = AzureCredentials.workloadIdentity(
            tenantID: "t", clientID: "c", tokenFile: URL(fileURLWithPath: "/var/run/token"), authorityHost: authority)
        #expect(try found(rest) == workload)
        let site = AzureCredentials.managedIdentity(
            endpoint: URL(string: "http://127.0.0.1:4141/msi/token")!, identityHeader: "h", clientID: "c")
        #expect(try found(everything.merging(["AZURE_TOKEN_CREDENTIALS": "ManagedIdentityCredential"]) { $1 }) == site)
        #expect(try found(everything.merging(["AZURE_TOKEN_CREDENTIALS": "dev"]) { $1 }, tag: azure) == nil)
        rest["AZURE_FEDERATED_TOKEN_FILE"] = nil
        #expect(try found(rest) == site)
        // The metadata service: named, or an Azure VM's asset tag
        #expect(
            try found(["AZURE_POD_IDENTITY_AUTHORITY_HOST": "http://10.0.0.4:2579"])
                == .managedIdentity(
                    endpoint: URL(string: "http://10.0.0.4:2579")!, identityHeader: nil, clientID: nil))
        #expect(
            try found([:], tag: azure)
                == .managedIdentity(
                    endpoint: AzureCredentials.defaultInstanceMetadataEndpoint, identityHeader: nil, clientID: nil))
        #expect(try found([:], tag: other) == nil && found([:]) == nil)
        #expect(
            AzureCredentials.managedIdentity(
                endpoint: AzureCredentials.defaultInstanceMetadataEndpoint, identityHeader: nil, clientID: nil
            ).tokenURL.absoluteString
                == "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://storage.azure.com"
        )
        for bad in [
            ["AZURE_FEDERATED_TOKEN_FILE": "/t"], ["AZURE_TENANT_ID": "a/b", "AZURE_CLIENT_ID": "c"],
            ["AZURE_AUTHORITY_HOST": "ftp://x"],
        ] {
            #expect(throws: AzureCredentials.Error.self, "\(bad)") { try found(bad) }
        }
    }
}

import Foundation
import ImagoCore

/// Where a server's Microsoft Entra ID tokens for Azure Storage come from: the credentials Azure's
/// `DefaultAzureCredential` tries for a service, and the same search (``default(environment:assetTagFile:)``), so
/// that a server on AKS, an Azure VM or App Service reads private containers with no account key, as imgproxy does
/// through the Azure SDK.
///
/// ```swift
/// if let credentials = try AzureCredentials.default(environment: ProcessInfo.processInfo.environment) {
///     let tokens = AzureAccessTokens(credentials: credentials)
/// }
/// ```
public enum AzureCredentials: Sendable, Hashable {
    /// An application's client secret (`AZURE_TENANT_ID`, `AZURE_CLIENT_ID`, `AZURE_CLIENT_SECRET`), traded at the
    /// tenant's token endpoint under `authorityHost`.
    case clientSecret(tenantID: String, clientID: String, secret: String, authorityHost: URL)
    /// AKS workload identity: the federated token in `tokenFile` (read at each exchange, as Kubernetes rotates it)
    /// traded as a client assertion at the tenant's token endpoint under `authorityHost`.
    case workloadIdentity(tenantID: String, clientID: String, tokenFile: URL, authorityHost: URL)
    /// The managed identity of the machine (the instance metadata service at `endpoint`) or of the App Service,
    /// Functions or Container Apps site (`endpoint` is `IDENTITY_ENDPOINT`, with `identityHeader`); a
    /// user-assigned identity is chosen by `clientID`.
    case managedIdentity(endpoint: URL, identityHeader: String?, clientID: String?)

    /// Entra ID's authority, `https://login.microsoftonline.com`.
    public static let defaultAuthorityHost = URL(string: "https://login.microsoftonline.com")!
    /// The instance metadata service, `http://169.254.169.254`.
    public static let defaultInstanceMetadataEndpoint = URL(string: "http://169.254.169.254")!
    /// The file whose text is the machine's chassis asset tag on Linux; Azure's VMs say
    /// ``azureAssetTag`` there.
    public static let defaultAssetTagFile = URL(fileURLWithPath: "/sys/class/dmi/id/chassis_asset_tag")
    /// The chassis asset tag of every Azure VM, as Azure documents it.
    public static let azureAssetTag = "7783-7084-3265-9085-8269-3286-77"
    /// The scope of Azure Storage's tokens.
    static let storageScope = "https://storage.azure.com/.default"

    /// Why the environment names credentials that cannot be used.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, naming the variable and never a secret.
        public var reason: String
        /// A sentence a person can act on.
        public var description: String { "unusable Azure credentials: \(reason)" }
    }

    /// The credentials `DefaultAzureCredential` would use for a service, tried in its order:
    ///
    /// 1. `AZURE_TENANT_ID`, `AZURE_CLIENT_ID` and `AZURE_CLIENT_SECRET` (Entra at `AZURE_AUTHORITY_HOST`, else
    ///    ``defaultAuthorityHost``);
    /// 2. `AZURE_FEDERATED_TOKEN_FILE` with `AZURE_TENANT_ID` and `AZURE_CLIENT_ID` (AKS workload identity);
    /// 3. a managed identity (`AZURE_CLIENT_ID` picks a user-assigned one): App Service's `IDENTITY_ENDPOINT` with
    ///    `IDENTITY_HEADER`; else the instance metadata service at `AZURE_POD_IDENTITY_AUTHORITY_HOST` when it is
    ///    set, else at ``defaultInstanceMetadataEndpoint`` when `assetTagFile` says the machine is an Azure VM. No
    ///    network probe.
    ///
    /// `AZURE_TOKEN_CREDENTIALS` narrows the search as the SDK's does: `prod` (all of the above), or one of
    /// `EnvironmentCredential`, `WorkloadIdentityCredential`, `ManagedIdentityCredential`; `dev` leaves none of
    /// them. `nil` when none applies (unsigned requests: public containers only).
    ///
    /// - Throws: ``Error`` for variables that name credentials but cannot be used.
    public static func `default`(
        environment: [String: String], assetTagFile: URL = defaultAssetTagFile
    ) throws(Error) -> AzureCredentials? {
        let only = environment.nonEmpty("AZURE_TOKEN_CREDENTIALS")?.lowercased()
        func tries(_ name: String) -> Bool { only == nil || only == "prod" || only == name.lowercased() }
        var authority = defaultAuthorityHost
        if let text = environment.nonEmpty("AZURE_AUTHORITY_HOST") {
            let withScheme = text.contains("://") ? text : "https://" + text
            guard let url = URL(string: withScheme), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host()?.isEmpty == false
            else { throw Error(reason: "AZURE_AUTHORITY_HOST '\(text)' is not a URL") }
            authority = url
        }
        let tenant = environment.nonEmpty("AZURE_TENANT_ID")
        let client = environment.nonEmpty("AZURE_CLIENT_ID")
        if tenant.map({ !$0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." } }) == true {
            throw Error(reason: "AZURE_TENANT_ID is not a tenant ID or domain")
        }
        if tries("EnvironmentCredential"), let tenant, let client,
            let secret = environment.nonEmpty("AZURE_CLIENT_SECRET")
        {
            return .clientSecret(tenantID: tenant, clientID: client, secret: secret, authorityHost: authority)
        }
        if tries("WorkloadIdentityCredential"), let file = environment.nonEmpty("AZURE_FEDERATED_TOKEN_FILE") {
            guard let tenant, let client else {
                throw Error(reason: "AZURE_FEDERATED_TOKEN_FILE needs AZURE_TENANT_ID and AZURE_CLIENT_ID")
            }
            return .workloadIdentity(
                tenantID: tenant, clientID: client, tokenFile: URL(fileURLWithPath: file), authorityHost: authority)
        }
        guard tries("ManagedIdentityCredential") else { return nil }
        if let text = environment.nonEmpty("IDENTITY_ENDPOINT"), let header = environment.nonEmpty("IDENTITY_HEADER") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw Error(reason: "IDENTITY_ENDPOINT '\(text)' is not an http URL")
            }
            return .managedIdentity(endpoint: url, identityHeader: header, clientID: client)
        }
        if let text = environment.nonEmpty("AZURE_POD_IDENTITY_AUTHORITY_HOST") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw Error(reason: "AZURE_POD_IDENTITY_AUTHORITY_HOST '\(text)' is not an http URL")
            }
            return .managedIdentity(endpoint: url, identityHeader: nil, clientID: client)
        }
        if let tag = try? String(contentsOf: assetTagFile, encoding: .utf8),
            tag.trimmingCharacters(in: .whitespacesAndNewlines) == azureAssetTag
        {
            return .managedIdentity(endpoint: defaultInstanceMetadataEndpoint, identityHeader: nil, clientID: client)
        }
        return nil
    }

    /// Where these credentials are traded for tokens: the tenant's token endpoint, or the managed identity's.
    public var tokenURL: URL {
        switch self {
        case .clientSecret(let tenant, _, _, let authority), .workloadIdentity(let tenant, _, _, let authority):
            return authority.appending(path: "\(tenant)/oauth2/v2.0/token")
        case .managedIdentity(let endpoint, let header, let client):
            // App Service's endpoint is the token URL itself; the metadata service's is below its address.
            var url = header == nil ? endpoint.appending(path: "metadata/identity/oauth2/token") : endpoint
            var items = [
                URLQueryItem(name: "api-version", value: header == nil ? "2018-02-01" : "2019-08-01"),
                URLQueryItem(name: "resource", value: "https://storage.azure.com"),
            ]
            if let client { items.append(URLQueryItem(name: "client_id", value: client)) }
            url.append(queryItems: items)
            return url
        }
    }

    /// A sentence naming these credentials without a secret, for logs.
    public var summary: String {
        switch self {
        case .clientSecret(let tenant, let client, _, _): "the client secret of \(client) in tenant \(tenant)"
        case .workloadIdentity(let tenant, let client, _, _): "the workload identity \(client) in tenant \(tenant)"
        case .managedIdentity(let endpoint, _, let client):
            "the managed identity\(client.map { " \($0)" } ?? ""), from \(endpoint.absoluteString)"
        }
    }
}

import Foundation
import ImagoCore

/// Where a server's AWS credentials come from: the sources of the AWS SDKs' default chain, and the same search
/// (``default(environment:systemVendorFile:)``), so that a server on EC2, ECS, Fargate or EKS reads private
/// buckets with the role it was given rather than a long-lived key, as imgproxy does through the AWS SDK.
///
/// ```swift
/// if let source = try AWSCredentialSource.default(environment: ProcessInfo.processInfo.environment) {
///     let provider = AWSCredentialProvider(source: source)
/// }
/// ```
public enum AWSCredentialSource: Sendable, Hashable {
    /// Credentials given as they are (environment variables, the shared credentials file): never refreshed.
    case fixed(AWSSigning.Credentials)
    /// A role assumed with an OpenID Connect token read from `tokenFile` at each exchange (EKS's IAM roles for
    /// service accounts): STS's `AssumeRoleWithWebIdentity` at `stsEndpoint`, which needs no signature.
    case webIdentity(roleARN: String, tokenFile: URL, sessionName: String, stsEndpoint: URL)
    /// The container credentials endpoint of ECS, Fargate or EKS Pod Identity: `url`, with an `Authorization`
    /// field from `authorizationFile` (read at each exchange, as the agent rotates it) or `authorization`.
    case container(url: URL, authorization: String?, authorizationFile: URL?)
    /// EC2's instance metadata service (IMDSv2: a session token first, then the instance role's credentials) at
    /// `endpoint`.
    case instanceMetadata(endpoint: URL)
    /// A role assumed with `base`'s credentials (another account's buckets, imgproxy's
    /// `IMGPROXY_S3_ASSUME_ROLE_ARN`): STS's `AssumeRole` at `stsEndpoint`, signed for `region`, with
    /// `externalID` when the role's trust policy asks for one.
    indirect case assumedRole(
        roleARN: String, externalID: String?, sessionName: String, stsEndpoint: URL, region: String,
        base: AWSCredentialSource)
    /// A profile's `credential_process`: `command` run by `/bin/sh -c`, which prints the credentials as JSON
    /// (`Version` 1, `AccessKeyId`, `SecretAccessKey`, `SessionToken`, `Expiration`); run again when they expire
    /// (never, without an `Expiration`).
    case process(command: String)

    /// EC2's instance metadata service, `http://169.254.169.254`.
    public static let defaultInstanceMetadataEndpoint = URL(string: "http://169.254.169.254")!
    /// The file whose text names the machine's vendor on Linux; EC2's Nitro instances say `Amazon EC2`.
    public static let defaultSystemVendorFile = URL(fileURLWithPath: "/sys/class/dmi/id/sys_vendor")
    /// ECS's container credentials host, to which `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` is relative.
    static let containerHost = "http://169.254.170.2"
    /// The hosts a plain-http `AWS_CONTAINER_CREDENTIALS_FULL_URI` may name, as the SDKs allow: loopback, ECS's
    /// and EKS Pod Identity's link-local addresses.
    static let containerHTTPHosts: Set<String> = ["169.254.170.2", "169.254.170.23", "fd00:ec2::23", "localhost"]

    /// Why the environment names credentials that cannot be used.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, naming the variable or the file and never a secret.
        public var reason: String
        /// A sentence a person can act on.
        public var description: String { "unusable AWS credentials: \(reason)" }
    }

    /// The source the AWS SDKs' default chain would use, searched in its order:
    ///
    /// 1. `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with `AWS_SESSION_TOKEN`);
    /// 2. the profile `AWS_PROFILE` (else `default`) of the shared files (``AWSSharedConfig``: the credentials file
    ///    and `~/.aws/config`), when it names credentials (``profile(_:in:environment:)``): a key, a role to assume
    ///    (`role_arn` with `source_profile`, `credential_source` or `web_identity_token_file`) or a
    ///    `credential_process`;
    /// 3. `AWS_WEB_IDENTITY_TOKEN_FILE` with `AWS_ROLE_ARN` (`AWS_ROLE_SESSION_NAME`; STS at
    ///    `AWS_ENDPOINT_URL_STS`, else the regional endpoint of `AWS_REGION`, else `https://sts.amazonaws.com`);
    /// 4. `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` (on `169.254.170.2`) or `AWS_CONTAINER_CREDENTIALS_FULL_URI`
    ///    (https, or http to loopback or the container agents' link-local addresses), with
    ///    `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` or `AWS_CONTAINER_AUTHORIZATION_TOKEN`;
    /// 5. the instance metadata service at `AWS_EC2_METADATA_SERVICE_ENDPOINT` when it is set, else at
    ///    ``defaultInstanceMetadataEndpoint`` when `systemVendorFile` says the machine is an EC2 instance; never
    ///    with `AWS_EC2_METADATA_DISABLED=true`. No network probe.
    ///
    /// `nil` when none applies (unsigned requests: public objects only).
    ///
    /// - Throws: ``Error`` for a variable or a file that names credentials but cannot be used.
    public static func `default`(
        environment: [String: String], systemVendorFile: URL = defaultSystemVendorFile
    ) throws(Error) -> AWSCredentialSource? {
        if let credentials = AWSSigning.Credentials(environment: environment) { return .fixed(credentials) }
        if let source = try profile(
            environment.nonEmpty("AWS_PROFILE") ?? "default", in: try AWSSharedConfig(environment: environment),
            environment: environment)
        {
            return source
        }
        if let tokenFile = environment.nonEmpty("AWS_WEB_IDENTITY_TOKEN_FILE") {
            guard let role = environment.nonEmpty("AWS_ROLE_ARN") else {
                throw Error(reason: "AWS_WEB_IDENTITY_TOKEN_FILE is set without AWS_ROLE_ARN")
            }
            return .webIdentity(
                roleARN: role, tokenFile: URL(fileURLWithPath: tokenFile),
                sessionName: sessionName(environment: environment),
                stsEndpoint: try stsEndpoint(environment: environment, region: environment.nonEmpty("AWS_REGION")))
        }
        if let container = try container(environment: environment) { return container }
        if environment.nonEmpty("AWS_EC2_METADATA_DISABLED")?.lowercased() == "true" { return nil }
        if let endpoint = try instanceMetadataEndpoint(environment: environment) {
            return .instanceMetadata(endpoint: endpoint)
        }
        if let vendor = try? String(contentsOf: systemVendorFile, encoding: .utf8),
            vendor.trimmingCharacters(in: .whitespacesAndNewlines) == "Amazon EC2"
        {
            return .instanceMetadata(endpoint: defaultInstanceMetadataEndpoint)
        }
        return nil
    }

    /// The container credentials endpoint the environment names (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or
    /// `…_FULL_URI`, with `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` or `…_TOKEN`); `nil` when it names none.
    ///
    /// - Throws: ``Error`` for a URI that is not a path, or a full URI neither https nor http to loopback or the
    ///   agents' link-local addresses.
    static func container(environment: [String: String]) throws(Error) -> AWSCredentialSource? {
        let authorization = environment.nonEmpty("AWS_CONTAINER_AUTHORIZATION_TOKEN")
        let authorizationFile = environment.nonEmpty("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE").map {
            URL(fileURLWithPath: $0)
        }
        if let relative = environment.nonEmpty("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
            guard relative.hasPrefix("/"), let url = URL(string: containerHost + relative) else {
                throw Error(reason: "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI '\(relative)' is not a path")
            }
            return .container(url: url, authorization: authorization, authorizationFile: authorizationFile)
        }
        if let full = environment.nonEmpty("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
            guard let url = URL(string: full), let host = url.host(percentEncoded: false)?.lowercased(),
                url.scheme?.lowercased() == "https"
                    || (url.scheme?.lowercased() == "http"
                        && (containerHTTPHosts.contains(host.trimmingCharacters(in: ["[", "]"]))
                            || host.hasPrefix("127.") || host == "::1" || host == "[::1]"))
            else {
                throw Error(
                    reason: "AWS_CONTAINER_CREDENTIALS_FULL_URI '\(full)' is neither https nor http to loopback "
                        + "or the container agent's address")
            }
            return .container(url: url, authorization: authorization, authorizationFile: authorizationFile)
        }
        return nil
    }

    /// `AWS_EC2_METADATA_SERVICE_ENDPOINT`, when set.
    ///
    /// - Throws: ``Error`` when it is not an http or https URL.
    static func instanceMetadataEndpoint(environment: [String: String]) throws(Error) -> URL? {
        guard let text = environment.nonEmpty("AWS_EC2_METADATA_SERVICE_ENDPOINT") else { return nil }
        guard let url = URL(string: text), url.scheme?.lowercased() == "http" || url.scheme?.lowercased() == "https",
            url.host()?.isEmpty == false
        else { throw Error(reason: "AWS_EC2_METADATA_SERVICE_ENDPOINT '\(text)' is not an http URL") }
        return url
    }

    /// The credentials profile `name` of `files` names, as the SDKs resolve it:
    ///
    /// - `role_arn`: the role assumed at STS (`external_id`, `role_session_name`; STS of the profile's `region`,
    ///   or `AWS_ENDPOINT_URL_STS`) with the credentials of `source_profile` (its key, or its own role, process…),
    ///   of `credential_source` (`Environment`, `Ec2InstanceMetadata`, `EcsContainer`), or with the token of
    ///   `web_identity_token_file`;
    /// - else `aws_access_key_id` and `aws_secret_access_key` (and `aws_session_token`);
    /// - else `credential_process`.
    ///
    /// `nil` when the files have no such profile, or one with settings only (a region), so the chain goes on.
    ///
    /// - Throws: ``Error`` for a profile that names credentials that cannot be used: a key without its secret, a
    ///   role without a source, a source profile that is missing or loops back, an IAM Identity Center (SSO)
    ///   profile (not supported: its tokens come from a browser sign-in).
    public static func profile(
        _ name: String, in files: AWSSharedConfig, environment: [String: String]
    ) throws(Error) -> AWSCredentialSource? {
        try profile(name, in: files, environment: environment, visited: [])
    }

    private static func profile(
        _ name: String, in files: AWSSharedConfig, environment: [String: String], visited: [String]
    ) throws(Error) -> AWSCredentialSource? {
        guard let fields = files.profile(name) else { return nil }
        func field(_ key: String) -> String? { fields[key].flatMap { $0.isEmpty ? nil : $0 } }
        let key = field("aws_access_key_id")
        let secret = field("aws_secret_access_key")
        let staticKey = key.flatMap { key in
            secret.map {
                AWSSigning.Credentials(accessKeyID: key, secretAccessKey: $0, sessionToken: field("aws_session_token"))
            }
        }
        if let role = field("role_arn") {
            let region = field("region") ?? environment.nonEmpty("AWS_REGION")
            let sessionName = field("role_session_name") ?? sessionName(environment: environment)
            let sts = try stsEndpoint(environment: environment, region: region)
            let base: AWSCredentialSource
            if let tokenFile = field("web_identity_token_file") {
                return .webIdentity(
                    roleARN: role, tokenFile: URL(fileURLWithPath: tokenFile), sessionName: sessionName,
                    stsEndpoint: sts)
            } else if let source = field("source_profile") {
                if source == name || visited.contains(source) {
                    // A profile that is its own source uses its own key, as the SDKs do; any other loop is an error.
                    guard source == name, let staticKey else {
                        throw Error(reason: "the profile '\(name)' has a source_profile chain that loops back")
                    }
                    base = .fixed(staticKey)
                } else if let found = try profile(
                    source, in: files, environment: environment, visited: visited + [name])
                {
                    base = found
                } else {
                    throw Error(reason: "the profile '\(name)' names a source_profile '\(source)' with no credentials")
                }
            } else if let source = field("credential_source") {
                switch source {
                case "Environment":
                    guard let credentials = AWSSigning.Credentials(environment: environment) else {
                        throw Error(
                            reason: "the profile '\(name)' takes its credentials from an environment without them")
                    }
                    base = .fixed(credentials)
                case "Ec2InstanceMetadata":
                    base = .instanceMetadata(
                        endpoint: try instanceMetadataEndpoint(environment: environment)
                            ?? defaultInstanceMetadataEndpoint)
                case "EcsContainer":
                    guard let container = try container(environment: environment) else {
                        throw Error(
                            reason: "the profile '\(name)' takes its credentials from a container that has none")
                    }
                    base = container
                default:
                    throw Error(reason: "the profile '\(name)' has an unknown credential_source '\(source)'")
                }
            } else {
                throw Error(
                    reason: "the profile '\(name)' has a role_arn without source_profile, credential_source or "
                        + "web_identity_token_file")
            }
            return .assumedRole(
                roleARN: role, externalID: field("external_id"), sessionName: sessionName, stsEndpoint: sts,
                region: region ?? "us-east-1", base: base)
        }
        if let staticKey { return .fixed(staticKey) }
        if key != nil || secret != nil {
            throw Error(reason: "the profile '\(name)' has only half of aws_access_key_id and aws_secret_access_key")
        }
        if let command = field("credential_process") { return .process(command: command) }
        if field("sso_session") != nil || field("sso_start_url") != nil {
            throw Error(
                reason: "the profile '\(name)' signs in with IAM Identity Center (SSO), which is not supported: "
                    + "use a credential_process such as 'aws configure export-credentials --profile \(name) "
                    + "--format process', or a role")
        }
        if files.credentialsFileProfiles.contains(name) {
            throw Error(reason: "the profile '\(name)' of the credentials file has no aws_access_key_id and secret")
        }
        return nil
    }

    /// STS's endpoint: `AWS_ENDPOINT_URL_STS`, else the regional endpoint of `region` (or `AWS_DEFAULT_REGION`),
    /// else the global `https://sts.amazonaws.com`.
    ///
    /// - Throws: ``Error`` for an `AWS_ENDPOINT_URL_STS` that is not an http or https URL.
    public static func stsEndpoint(environment: [String: String], region: String?) throws(Error) -> URL {
        if let text = environment.nonEmpty("AWS_ENDPOINT_URL_STS") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw Error(reason: "AWS_ENDPOINT_URL_STS '\(text)' is not an http or https URL")
            }
            return url
        }
        if let region = [region, environment["AWS_DEFAULT_REGION"]].compactMap({ $0 }).first(where: { !$0.isEmpty }),
            region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        {
            return URL(string: "https://sts.\(region).amazonaws.com")!
        }
        return URL(string: "https://sts.amazonaws.com")!
    }

    /// `AWS_ROLE_SESSION_NAME`, else `imago-` and the time.
    public static func sessionName(environment: [String: String]) -> String {
        environment.nonEmpty("AWS_ROLE_SESSION_NAME")
            ?? "imago-\(Int(Date().timeIntervalSince1970))"
    }

    /// A sentence naming this source without a secret, for logs.
    public var summary: String {
        switch self {
        case .fixed(let credentials): "the access key \(credentials.accessKeyID)"
        case .webIdentity(let role, _, _, let sts): "the role \(role), assumed at \(sts.absoluteString)"
        case .container(let url, _, _): "the container credentials at \(url.absoluteString)"
        case .instanceMetadata(let endpoint): "the instance role, from \(endpoint.absoluteString)"
        case .assumedRole(let role, _, _, let sts, _, let base):
            "the role \(role), assumed at \(sts.absoluteString) with \(base.summary)"
        case .process: "the profile's credential_process"
        }
    }
}

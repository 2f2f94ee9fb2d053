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
    /// 2. the profile `AWS_PROFILE` (else `default`) of the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`,
    ///    else `HOME/.aws/credentials`), when it has one with a key;
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
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let credentials = AWSSigning.Credentials(environment: environment) { return .fixed(credentials) }
        let home = value("HOME").map { URL(fileURLWithPath: $0) }
        if let file = value("AWS_SHARED_CREDENTIALS_FILE").map({ URL(fileURLWithPath: $0) })
            ?? home?.appending(path: ".aws/credentials"),
            let credentials = try sharedCredentials(in: file, profile: value("AWS_PROFILE") ?? "default")
        {
            return .fixed(credentials)
        }
        if let tokenFile = value("AWS_WEB_IDENTITY_TOKEN_FILE") {
            guard let role = value("AWS_ROLE_ARN") else {
                throw Error(reason: "AWS_WEB_IDENTITY_TOKEN_FILE is set without AWS_ROLE_ARN")
            }
            return .webIdentity(
                roleARN: role, tokenFile: URL(fileURLWithPath: tokenFile),
                sessionName: sessionName(environment: environment),
                stsEndpoint: try stsEndpoint(environment: environment, region: value("AWS_REGION")))
        }
        let authorization = value("AWS_CONTAINER_AUTHORIZATION_TOKEN")
        let authorizationFile = value("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE").map { URL(fileURLWithPath: $0) }
        if let relative = value("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
            guard relative.hasPrefix("/"), let url = URL(string: containerHost + relative) else {
                throw Error(reason: "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI '\(relative)' is not a path")
            }
            return .container(url: url, authorization: authorization, authorizationFile: authorizationFile)
        }
        if let full = value("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
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
        if value("AWS_EC2_METADATA_DISABLED")?.lowercased() == "true" { return nil }
        if let text = value("AWS_EC2_METADATA_SERVICE_ENDPOINT") {
            guard let url = URL(string: text),
                url.scheme?.lowercased() == "http" || url.scheme?.lowercased() == "https",
                url.host()?.isEmpty == false
            else { throw Error(reason: "AWS_EC2_METADATA_SERVICE_ENDPOINT '\(text)' is not an http URL") }
            return .instanceMetadata(endpoint: url)
        }
        if let vendor = try? String(contentsOf: systemVendorFile, encoding: .utf8),
            vendor.trimmingCharacters(in: .whitespacesAndNewlines) == "Amazon EC2"
        {
            return .instanceMetadata(endpoint: defaultInstanceMetadataEndpoint)
        }
        return nil
    }

    /// STS's endpoint: `AWS_ENDPOINT_URL_STS`, else the regional endpoint of `region` (or `AWS_DEFAULT_REGION`),
    /// else the global `https://sts.amazonaws.com`.
    ///
    /// - Throws: ``Error`` for an `AWS_ENDPOINT_URL_STS` that is not an http or https URL.
    public static func stsEndpoint(environment: [String: String], region: String?) throws(Error) -> URL {
        if let text = environment["AWS_ENDPOINT_URL_STS"], !text.isEmpty {
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
        environment["AWS_ROLE_SESSION_NAME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "imago-\(Int(Date().timeIntervalSince1970))"
    }

    /// The key of `profile` in the shared credentials file at `file` (an INI file: `[profile]` sections of
    /// `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`); `nil` when the file or the profile is
    /// missing.
    ///
    /// - Throws: ``Error`` when the profile is there without a key and its secret, or the file is over 1 MiB.
    static func sharedCredentials(in file: URL, profile: String) throws(Error) -> AWSSigning.Credentials? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let size = (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? .max
        guard size <= 1 << 20, let text = try? String(contentsOf: file, encoding: .utf8) else {
            throw Error(reason: "'\(file.path)' is not a readable credentials file")
        }
        var section: String?
        var fields: [String: String] = [:]
        var found = false
        for line in text.split(whereSeparator: \.isNewline) {
            let line = line.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                found = found || section == profile
                continue
            }
            guard section == profile, let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            fields[name] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        guard found else { return nil }
        guard let key = fields["aws_access_key_id"], !key.isEmpty, let secret = fields["aws_secret_access_key"],
            !secret.isEmpty
        else {
            throw Error(reason: "the profile '\(profile)' of '\(file.path)' has no aws_access_key_id and secret")
        }
        let token = fields["aws_session_token"]
        return AWSSigning.Credentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: token?.isEmpty == false ? token : nil)
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
        }
    }
}

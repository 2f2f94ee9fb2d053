import Foundation

/// Settings kept in AWS, read once at start (imgproxy's `IMGPROXY_ENV_AWS_SECRET_*` and
/// `IMGPROXY_ENV_AWS_SSM_PARAMETERS_*`): a Secrets Manager secret whose text is `.env` lines, and the parameters
/// under a Parameter Store path, each a variable named by the rest of its path (`/imago/prod/IMAGO_KEY` under
/// `/imago/prod` is `IMAGO_KEY`; deeper levels joined by `_`). Both are AWS JSON 1.1 calls (`X-Amz-Target`)
/// signed with Signature Version 4 by libcurl, with credentials the caller found (the default chain).
///
/// ```swift
/// let secret = AWSConfigurationSecrets.Secret(id: "imago/prod", region: "eu-west-1")
/// let text = try await AWSConfigurationSecrets.text(of: secret, credentials: credentials)
/// ```
public enum AWSConfigurationSecrets {
    /// A Secrets Manager secret: its ID (name or ARN), version (an ID, else a stage such as `AWSPREVIOUS`; else
    /// `AWSCURRENT`), and where Secrets Manager is.
    public struct Secret: Sendable, Hashable {
        /// The secret's name or ARN.
        public var id: String
        /// A version ID. Default `nil`.
        public var versionID: String?
        /// A version stage, when no ``versionID``. Default `nil`: the current version.
        public var versionStage: String?
        /// The region it is in.
        public var region: String
        /// Secrets Manager's endpoint. Default `https://secretsmanager.REGION.amazonaws.com`.
        public var endpoint: URL

        /// A secret `id` in `region`, at `endpoint` (default: the region's).
        public init(
            id: String, versionID: String? = nil, versionStage: String? = nil, region: String, endpoint: URL? = nil
        ) {
            self.id = id
            self.versionID = versionID
            self.versionStage = versionStage
            self.region = region
            self.endpoint = endpoint ?? URL(string: "https://secretsmanager.\(region).amazonaws.com")!
        }
    }

    /// The parameters under a Parameter Store path (not its sub-paths, as imgproxy reads them), decrypted.
    public struct ParameterPath: Sendable, Hashable {
        /// The path, such as `/imago/prod`.
        public var path: String
        /// The region it is in.
        public var region: String
        /// Systems Manager's endpoint. Default `https://ssm.REGION.amazonaws.com`.
        public var endpoint: URL

        /// The parameters under `path` in `region`, at `endpoint` (default: the region's).
        public init(path: String, region: String, endpoint: URL? = nil) {
            self.path = path
            self.region = region
            self.endpoint = endpoint ?? URL(string: "https://ssm.\(region).amazonaws.com")!
        }
    }

    /// Why the settings could not be read.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What went wrong, never with a secret.
        public var description: String
    }

    /// The secret's text (`SecretString`); `nil` for a binary secret.
    ///
    /// - Throws: ``Error`` naming the status and AWS's error type.
    public static func text(
        of secret: Secret, credentials: AWSSigning.Credentials, timeout: Duration = .seconds(30)
    ) async throws(Error) -> String? {
        var request: [String: String] = ["SecretId": secret.id]
        if let version = secret.versionID {
            request["VersionId"] = version
        } else if let stage = secret.versionStage {
            request["VersionStage"] = stage
        }
        struct Answer: Decodable { var SecretString: String? }
        let data = try await call(
            secret.endpoint, target: "secretsmanager.GetSecretValue", service: "secretsmanager",
            region: secret.region, body: request, credentials: credentials, timeout: timeout)
        guard let answer = try? JSONDecoder().decode(Answer.self, from: data) else {
            throw Error(description: "Secrets Manager's answer is not GetSecretValue's JSON")
        }
        return answer.SecretString
    }

    /// The variables of the parameters of type `text` under the path: names after the path, `/` as `_`; every
    /// page of the answer.
    ///
    /// - Throws: ``Error`` naming the status and AWS's error type.
    public static func variables(
        under parameters: ParameterPath, credentials: AWSSigning.Credentials, timeout: Duration = .seconds(30)
    ) async throws(Error) -> [String: String] {
        struct Parameter: Decodable {
            var Name: String?
            var Value: String?
            var DataType: String?
        }
        struct Page: Decodable {
            var Parameters: [Parameter]?
            var NextToken: String?
        }
        struct Request: Encodable {
            var Path: String
            var WithDecryption = true
            var NextToken: String?
        }
        var variables: [String: String] = [:]
        var next: String?
        for _ in 0..<1000 {  // pages of 10: 10,000 parameters at most
            let data = try await call(
                parameters.endpoint, target: "AmazonSSM.GetParametersByPath", service: "ssm",
                region: parameters.region, body: Request(Path: parameters.path, NextToken: next),
                credentials: credentials, timeout: timeout)
            guard let page = try? JSONDecoder().decode(Page.self, from: data) else {
                throw Error(description: "Systems Manager's answer is not GetParametersByPath's JSON")
            }
            for parameter in page.Parameters ?? [] {
                guard let name = parameter.Name, let value = parameter.Value,
                    parameter.DataType == nil || parameter.DataType == "text"
                else { continue }
                var rest = name.hasPrefix(parameters.path) ? String(name.dropFirst(parameters.path.count)) : name
                while rest.hasPrefix("/") { rest.removeFirst() }
                guard !rest.isEmpty else { continue }
                variables[rest.replacingOccurrences(of: "/", with: "_")] = value
            }
            guard let token = page.NextToken, !token.isEmpty else { return variables }
            next = token
        }
        throw Error(description: "Systems Manager kept answering more pages")
    }

    /// An AWS JSON error answer: its type, `…#AccessDeniedException` or `ResourceNotFoundException`.
    private struct ServiceFailure: Decodable { var __type: String? }

    /// One AWS JSON 1.1 call: `body` POSTed to `endpoint` with `target`, signed for `region` and `service`.
    private static func call(
        _ endpoint: URL, target: String, service: String, region: String, body: some Encodable,
        credentials: AWSSigning.Credentials, timeout: Duration
    ) async throws(Error) -> Data {
        let json = (try? JSONEncoder().encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let exchange = CurlExchange.awsPOST(
            endpoint, fields: ["Content-Type: application/x-amz-json-1.1", "X-Amz-Target: \(target)"], body: json,
            region: region, service: service, credentials: credentials, timeout: timeout)
        let answer: CurlExchange.Answer
        do {
            answer = try await exchange.perform()
        } catch {
            throw Error(description: "\(target) at \(endpoint.absoluteString): \(error)")
        }
        guard answer.status == 200 else {
            let type = (try? JSONDecoder().decode(ServiceFailure.self, from: answer.data))?.__type.map {
                " (" + ($0.split(separator: "#").last.map(String.init) ?? $0) + ")"
            }
            throw Error(description: "\(target) answered HTTP \(answer.status)\(type ?? "")")
        }
        return answer.data
    }
}

import Foundation
import Imago
import ImagoServer

extension ServeCommand {
    /// The region the environment names: `AWS_REGION`, else `AWS_DEFAULT_REGION`; `nil` when neither is set.
    static func awsRegion(environment: [String: String]) -> String? {
        environment.nonEmpty("AWS_REGION") ?? environment.nonEmpty("AWS_DEFAULT_REGION")
    }

    /// The endpoint of an AWS service the environment names: `variable` (`AWS_ENDPOINT_URL_SSM` …), else
    /// `AWS_ENDPOINT_URL`; `nil` when neither is set.
    ///
    /// - Throws: ``UsageError`` for one that is not an http or https URL.
    static func awsEndpoint(_ variable: String, environment: [String: String]) throws -> URL? {
        guard let text = environment.nonEmpty(variable) ?? environment.nonEmpty("AWS_ENDPOINT_URL") else { return nil }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
            throw UsageError("\(variable) '\(text)' is not an http or https URL")
        }
        return url
    }

    /// The Google credentials a key option gives: the key's JSON itself (text starting with `{`), or a file's path.
    static func googleCredentials(key given: String) throws(GoogleServiceAccount.Error) -> GoogleCredentials {
        given.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("{")
            ? try GoogleCredentials(json: Data(given.utf8))
            : try GoogleCredentials(contentsOf: URL(fileURLWithPath: given))
    }

    /// `--s3` and the options that need it: the sources, `nil` without `--s3`. The region defaults to the
    /// environment's `AWS_REGION` (or `AWS_DEFAULT_REGION`), else `us-east-1`.
    static func parseS3(_ args: ParsedArguments, environment: [String: String]) throws -> S3Sources? {
        guard args.has("--s3") else {
            try args.refuse(
                [
                    "--s3-region", "--s3-endpoint", "--s3-virtual-hosted", "--s3-assume-role",
                    "--s3-assume-role-external-id", "--s3-access-point",
                ],
                without: "--s3")
            return nil
        }
        var sources = S3Sources(
            region: args.value("--s3-region") ?? awsRegion(environment: environment) ?? "us-east-1")
        guard !sources.region.isEmpty,
            sources.region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else { throw UsageError("option '--s3-region' expects a region name such as eu-west-1") }
        if let text = args.value("--s3-endpoint") {
            guard let endpoint = S3Sources.endpoint(parsing: text) else {
                throw UsageError("option '--s3-endpoint' expects an http or https URL such as http://minio:9000")
            }
            sources.endpoint = endpoint
        } else if args.has("--s3-virtual-hosted") {
            throw UsageError("option '--s3-virtual-hosted' needs --s3-endpoint (AWS's endpoint picks its own style)")
        }
        sources.usesPathStyle = !args.has("--s3-virtual-hosted")
        for pair in args.values["--s3-access-point"] ?? [] {
            guard sources.endpoint == nil else {
                throw UsageError("option '--s3-access-point' is for AWS's own endpoints, not --s3-endpoint")
            }
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, let point = S3AccessPoint(arn: parts[1]) else {
                throw UsageError(
                    "option '--s3-access-point' expects BUCKET=arn:aws:s3:REGION:ACCOUNT:accesspoint/NAME (got '\(pair)'; Multi-Region access points are not supported)"
                )
            }
            sources.accessPoints[parts[0]] = point
        }
        return sources
    }

    /// `--gcs` and the options that need it: the sources (`nil` without `--gcs`), with tokens from the credentials
    /// in `--gcs-key` (their JSON, or a file's path), else from those Google's Application Default Credentials
    /// find (``GoogleCredentials/applicationDefault(environment:productNameFile:)``: the file
    /// `GOOGLE_APPLICATION_CREDENTIALS` names, gcloud's file, the metadata server), else none (public objects).
    static func parseGCS(_ args: ParsedArguments, environment: [String: String]) throws -> GoogleCloudStorageSources? {
        guard args.has("--gcs") else {
            try args.refuse(["--gcs-key", "--gcs-endpoint"], without: "--gcs")
            return nil
        }
        var sources = GoogleCloudStorageSources()
        if let text = args.value("--gcs-endpoint") {
            guard let endpoint = GoogleCloudStorageSources.endpoint(parsing: text) else {
                throw UsageError("option '--gcs-endpoint' expects an http or https URL such as http://127.0.0.1:4443")
            }
            sources.endpoint = endpoint
        }
        let credentials: GoogleCredentials?
        do {
            if let given = args.value("--gcs-key"), !given.isEmpty {
                credentials = try googleCredentials(key: given)
            } else {
                credentials = try GoogleCredentials.applicationDefault(environment: environment)
            }
        } catch {
            let option = args.value("--gcs-key") != nil ? "--gcs-key" : "Application Default Credentials"
            throw UsageError("\(option): \(error)")
        }
        sources.tokens = credentials.map { GoogleAccessTokens(credentials: $0) }
        return sources
    }

    /// `--swift` and the options that need it: the sources (`nil` without `--swift`), signing in with the
    /// `--swift-…` credentials.
    static func parseSwift(_ args: ParsedArguments) throws -> OpenStackSwiftSources? {
        let options = [
            "--swift-auth-url", "--swift-username", "--swift-api-key", "--swift-domain", "--swift-tenant",
            "--swift-auth-version",
        ]
        guard args.has("--swift") else {
            try args.refuse(options, without: "--swift")
            return nil
        }
        for option in options.prefix(3) where (args.value(option) ?? "").isEmpty {
            throw UsageError("option '--swift' needs \(option)")
        }
        guard let text = args.value("--swift-auth-url"), let url = OpenStackSwiftSources.endpoint(parsing: text) else {
            throw UsageError(
                "option '--swift-auth-url' expects an http or https URL such as https://keystone.example/v3")
        }
        let version = try parseInteger(
            args.value("--swift-auth-version") ?? "0", option: "--swift-auth-version", range: 0...3)
        let credentials = OpenStackCredentials(
            authURL: url, username: args.value("--swift-username") ?? "", apiKey: args.value("--swift-api-key") ?? "",
            domain: args.value("--swift-domain") ?? "", tenant: args.value("--swift-tenant") ?? "",
            authVersion: version)
        guard credentials.resolvedVersion != nil else {
            throw UsageError(
                "option '--swift-auth-url' names no auth version (v1, v2 or v3): give --swift-auth-version")
        }
        return OpenStackSwiftSources(tokens: OpenStackTokens(credentials: credentials))
    }

    /// `--abs` and the options that need it: the sources (`nil` without `--abs`) and, with `--abs-key`, the
    /// signing of their requests; without it, the sources carry Entra ID tokens from the credentials
    /// ``AzureCredentials/default(environment:assetTagFile:)`` finds, if any.
    static func parseAzureBlob(
        _ args: ParsedArguments, environment: [String: String]
    ) throws -> (AzureBlobSources?, AzureSharedKeySigning?) {
        guard args.has("--abs") else {
            try args.refuse(["--abs-name", "--abs-key", "--abs-endpoint"], without: "--abs")
            return (nil, nil)
        }
        guard let name = args.value("--abs-name"), !name.isEmpty,
            name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber) })
        else { throw UsageError("option '--abs' needs --abs-name ACCOUNT (lowercase letters and digits)") }
        var sources = AzureBlobSources(accountName: name)
        if let text = args.value("--abs-endpoint") {
            guard let endpoint = AzureBlobSources.endpoint(parsing: text) else {
                throw UsageError("option '--abs-endpoint' expects an http or https URL")
            }
            sources.endpoint = endpoint
        }
        guard let key = args.value("--abs-key") else {
            do {
                sources.tokens = try AzureCredentials.default(environment: environment).map {
                    AzureAccessTokens(credentials: $0)
                }
            } catch {
                throw UsageError("--abs: \(error)")
            }
            return (sources, nil)
        }
        do {
            return (sources, try AzureSharedKeySigning(accountName: name, accountKey: key, hosts: sources.signedHosts))
        } catch {
            throw UsageError("option '--abs-key' expects the account key in base64, as the Azure portal shows it")
        }
    }

    /// `environment` with the settings kept in AWS over it, as imgproxy reads them at start: the `.env` text of the
    /// Secrets Manager secret `--env-aws-secret-id` (`IMGPROXY_ENV_AWS_SECRET_ID`; its version, stage and region
    /// options), then the parameters under `--env-aws-ssm-parameters-path` (`IMGPROXY_ENV_AWS_SSM_PARAMETERS_PATH`),
    /// each signed with the credentials of the AWS SDKs' default chain. The region is the option's, else
    /// `AWS_REGION`, else `us-west-1` (imgproxy's); `AWS_ENDPOINT_URL_SECRETS_MANAGER` and `AWS_ENDPOINT_URL_SSM`
    /// (else `AWS_ENDPOINT_URL`) name other endpoints. Then the `.env` text of the Google Cloud Secret Manager
    /// secret `--env-gcp-secret-id` (`IMGPROXY_ENV_GCP_SECRET_ID`; its project, version, key and endpoint
    /// options), read with `--env-gcp-key` or Application Default Credentials. `environment` itself without any.
    ///
    /// - Throws: ``UsageError`` for bad options; an error naming the service when it cannot be read.
    static func cloudEnvironment(
        _ given: ParsedArguments, over environment: [String: String]
    ) async throws -> [String: String] {
        let args = try given.fillingIn(from: environment, prefix: "IMAGO_", options: command.options)
        let secretID = args.value("--env-aws-secret-id")
        let parameterPath = args.value("--env-aws-ssm-parameters-path")
        if secretID == nil {
            try args.refuse(
                ["--env-aws-secret-version-id", "--env-aws-secret-version-stage", "--env-aws-secret-region"],
                without: "--env-aws-secret-id")
        }
        if parameterPath == nil {
            try args.refuse(["--env-aws-ssm-parameters-region"], without: "--env-aws-ssm-parameters-path")
        }
        if args.value("--env-gcp-secret-id") == nil {
            try args.refuse(
                [
                    "--env-gcp-secret-project-id", "--env-gcp-secret-version-id", "--env-gcp-key",
                    "--env-gcp-secret-endpoint",
                ],
                without: "--env-gcp-secret-id")
        }
        var result = environment
        if secretID != nil || parameterPath != nil {
            result = try await awsEnvironment(args, secretID: secretID, parameterPath: parameterPath, over: result)
        }
        if let secret = args.value("--env-gcp-secret-id") {
            result = try await googleEnvironment(args, secret: secret, over: result)
        }
        return result
    }

    /// `environment` with the settings of AWS Secrets Manager's `secretID` and Parameter Store's `parameterPath`
    /// over it (``cloudEnvironment(_:over:)``).
    private static func awsEnvironment(
        _ args: ParsedArguments, secretID: String?, parameterPath: String?, over environment: [String: String]
    ) async throws -> [String: String] {
        func endpoint(_ variable: String) throws -> URL? { try awsEndpoint(variable, environment: environment) }
        let defaultRegion = awsRegion(environment: environment) ?? "us-west-1"
        guard let source = try AWSCredentialSource.default(environment: environment) else {
            throw UsageError("no AWS credentials found to read the settings kept in AWS with")
        }
        let credentials = try await AWSCredentialProvider(source: source).credentials()
        var result = environment
        if let secretID {
            let secret = AWSConfigurationSecrets.Secret(
                id: secretID, versionID: args.value("--env-aws-secret-version-id"),
                versionStage: args.value("--env-aws-secret-version-stage"),
                region: args.value("--env-aws-secret-region") ?? defaultRegion,
                endpoint: try endpoint("AWS_ENDPOINT_URL_SECRETS_MANAGER"))
            if let text = try await AWSConfigurationSecrets.text(of: secret, credentials: credentials) {
                do {
                    result.merge(try EnvironmentFile(parsing: text, environment: result).values) { $1 }
                } catch let error as EnvironmentFile.Error {
                    throw UsageError("the secret '\(secretID)' is not .env text: \(error)")
                }
            }
        }
        if let parameterPath {
            let parameters = AWSConfigurationSecrets.ParameterPath(
                path: parameterPath, region: args.value("--env-aws-ssm-parameters-region") ?? defaultRegion,
                endpoint: try endpoint("AWS_ENDPOINT_URL_SSM"))
            result.merge(try await AWSConfigurationSecrets.variables(under: parameters, credentials: credentials)) {
                $1
            }
        }
        return result
    }

    /// `environment` with the `.env` text of Secret Manager's `secret` over it (``cloudEnvironment(_:over:)``),
    /// read with the credentials of `--env-gcp-key` (its JSON, or a file's path) or Application Default
    /// Credentials.
    private static func googleEnvironment(
        _ args: ParsedArguments, secret: String, over environment: [String: String]
    ) async throws -> [String: String] {
        guard
            let project = args.value("--env-gcp-secret-project-id")
                ?? environment.nonEmpty("GOOGLE_CLOUD_PROJECT")
        else {
            throw UsageError("option '--env-gcp-secret-id' needs --env-gcp-secret-project-id (or GOOGLE_CLOUD_PROJECT)")
        }
        var endpoint: URL?
        if let text = args.value("--env-gcp-secret-endpoint") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw UsageError("option '--env-gcp-secret-endpoint' expects an http or https URL (got '\(text)')")
            }
            endpoint = url
        }
        let credentials: GoogleCredentials
        do {
            if let given = args.value("--env-gcp-key"), !given.isEmpty {
                credentials = try googleCredentials(key: given)
            } else if let found = try GoogleCredentials.applicationDefault(environment: environment) {
                credentials = found
            } else {
                throw UsageError("no Google credentials found to read the secret '\(secret)' with (--env-gcp-key)")
            }
        } catch let error as GoogleServiceAccount.Error {
            throw UsageError("option '--env-gcp-key': \(error)")
        }
        let location = GoogleConfigurationSecret(
            project: project, secret: secret, version: args.value("--env-gcp-secret-version-id") ?? "latest",
            endpoint: endpoint)
        let tokens = GoogleAccessTokens(credentials: credentials, scope: GoogleConfigurationSecret.scope)
        guard let text = try await location.text(tokens: tokens) else { return environment }
        do {
            return environment.merging(try EnvironmentFile(parsing: text, environment: environment).values) { $1 }
        } catch let error as EnvironmentFile.Error {
            throw UsageError("the secret '\(secret)' is not .env text: \(error)")
        }
    }
}

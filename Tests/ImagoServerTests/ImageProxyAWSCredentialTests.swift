import Foundation
import Imago
import ImagoServer
import ImagoTesting
import Testing

@testable import ImagoCLI
@testable import ImagoCurl

/// `s3:` sources signed with the credentials the AWS SDKs' default chain finds (`AWSCredentialSource`): the shared
/// credentials file, a role assumed with a web identity token (EKS), the container endpoint (ECS, Fargate, EKS Pod
/// Identity) and EC2's instance metadata service (IMDSv2), each played by a loopback server, with every signature
/// checked by the independent verifier of `ImageProxyS3SourceTests`.
@Suite("ImageProxy: AWS credentials from the default chain")
struct ImageProxyAWSCredentialTests {
    static let key = "ASIAIMAGOTEMPORARY01"
    static let secret = "temporary/secret+KEY0123456789abcdefghij"
    static let token = "IQoJb3JpZ2luX2VjEXAMPLESESSION"

    /// The JSON the container endpoint and the metadata service answer, expiring in an hour.
    static var roleJSON: Data {
        let expiration = Date().addingTimeInterval(3600).formatted(.iso8601)
        return Data(
            #"{"Code":"Success","AccessKeyId":"\#(key)","SecretAccessKey":"\#(secret)","Token":"\#(token)","Expiration":"\#(expiration)"}"#
                .utf8)
    }

    /// A loopback origin with `media/a.jpg`, and the proxy `imago serve --s3` makes for it in `environment` (no
    /// metadata service looked for unless it names one).
    static func serve(
        _ origin: LoopbackServer, environment: [String: String], arguments: [String] = [],
        accessLog: (@Sendable (AccessLogRecord) -> Void)? = nil
    ) throws -> ImageProxy {
        origin.setRoute("/media/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        var quiet = quietCloudEnvironment.merging(environment) { _, given in given }
        if environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"] != nil { quiet["AWS_EC2_METADATA_DISABLED"] = nil }
        return try servedProxy(
            ["--s3", "--s3-region", "eu-west-1", "--s3-endpoint", origin.url(for: "/").absoluteString] + arguments,
            environment: quiet, accessLog: accessLog)
    }

    /// Two loads of the object: both answered, both signed with the temporary credentials and their token.
    static func expectSignedLoads(_ proxy: ImageProxy, origin: LoopbackServer) async throws {
        for width in [20, 10] {
            let response = await proxy.respond(
                to: ServerRequest(method: "GET", path: "/_/w:\(width)/f:png/plain/s3://media/a.jpg"))
            #expect(response.status == 200, "\(errorMessage(response))")
            let request = try #require(origin.lastRequest(for: "/media/a.jpg"))
            #expect(request.headers["x-amz-security-token"] == token)
            #expect(try ImageProxyS3SourceTests.verify(request, secret: secret) == "ok \(key) eu-west-1 s3")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anEC2InstanceRoleSignsThroughIMDSv2() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let role = "/latest/meta-data/iam/security-credentials/imago-role"
        origin.setRoute(
            "/latest/api/token",
            .handler { request in
                request.method == "PUT" && request.headers["X-aws-ec2-metadata-token-ttl-seconds"] == "21600"
                    ? LoopbackServer.Response(status: 200, body: Data("imds-session".utf8))
                    : LoopbackServer.Response(status: 405)
            })
        for (path, body) in [
            ("/latest/meta-data/iam/security-credentials/", Data("imago-role\n".utf8)), (role, Self.roleJSON),
        ] {
            origin.setRoute(
                path,
                .handler { request in
                    request.headers["X-aws-ec2-metadata-token"] == "imds-session"
                        ? LoopbackServer.Response(status: 200, body: body) : LoopbackServer.Response(status: 401)
                })
        }
        let proxy = try Self.serve(
            origin, environment: ["AWS_EC2_METADATA_SERVICE_ENDPOINT": origin.url(for: "/").absoluteString])
        try await Self.expectSignedLoads(proxy, origin: origin)
        // Fetched once for both loads
        #expect(origin.requestCount(for: "/latest/api/token") == 1 && origin.requestCount(for: role) == 1)

        // An instance without a role: a 502, and the object is not asked for
        let bare = try LoopbackServer()
        defer { bare.stop() }
        bare.setRoute("/latest/api/token", .bytes(Data("t".utf8), contentType: "text/plain"))
        let logged = Locked<[AccessLogRecord]>([])
        let refused = try Self.serve(
            bare, environment: ["AWS_EC2_METADATA_SERVICE_ENDPOINT": bare.url(for: "/").absoluteString],
            accessLog: { record in logged.withLock { $0.append(record) } })
        let response = await refused.respond(to: ServerRequest(method: "GET", path: "/_/w:10/plain/s3://media/a.jpg"))
        #expect(response.status == 502, "\(errorMessage(response))")
        #expect(bare.requestCount(for: "/media/a.jpg") == 0)
        // The client is told the request could not be made; the operator's log says why
        #expect(!errorMessage(response).contains("role"))
        #expect(logged.value.last?.error?.contains("the instance has no role") == true, "\(logged.value)")
        // imgproxy's IMGPROXY_DEVELOPMENT_ERRORS_MODE: the client is told why too
        let developing = try Self.serve(
            bare, environment: ["AWS_EC2_METADATA_SERVICE_ENDPOINT": bare.url(for: "/").absoluteString],
            arguments: ["--development-errors"])
        let detailed = await developing.respond(
            to: ServerRequest(method: "GET", path: "/_/w:10/plain/s3://media/a.jpg"))
        #expect(detailed.status == 502 && errorMessage(detailed).contains("the instance has no role"))
    }

    @Test(.timeLimit(.minutes(1)))
    func theContainerEndpointIsAskedWithTheAgentsRotatedToken() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appending(path: "eks-pod-identity-token")
        try Data("pod-identity-token\n".utf8).write(to: tokenFile)
        origin.setRoute(
            "/v1/credentials",
            .handler { request in
                request.headers["Authorization"] == "pod-identity-token"
                    ? LoopbackServer.Response(status: 200, body: Self.roleJSON) : LoopbackServer.Response(status: 403)
            })
        let proxy = try Self.serve(
            origin,
            environment: [
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": origin.url(for: "/v1/credentials").absoluteString,
                "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": tokenFile.path,
            ])
        try await Self.expectSignedLoads(proxy, origin: origin)
        #expect(origin.requestCount(for: "/v1/credentials") == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func aWebIdentityTokenAssumesTheRoleAtSTS() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenFile = directory.appending(path: "token")
        try Data("eyJhbGciOiJSUzI1NiJ9.oidc.token".utf8).write(to: tokenFile)
        let role = "arn:aws:iam::123456789012:role/imago-reader"
        let answer = """
            <AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
              <AssumeRoleWithWebIdentityResult>
                <Credentials>
                  <SessionToken>\(Self.token)</SessionToken>
                  <SecretAccessKey>\(Self.secret)</SecretAccessKey>
                  <Expiration>\(Date().addingTimeInterval(3600).formatted(.iso8601))</Expiration>
                  <AccessKeyId>\(Self.key)</AccessKeyId>
                </Credentials>
              </AssumeRoleWithWebIdentityResult>
            </AssumeRoleWithWebIdentityResponse>
            """
        origin.setRoute(
            "/sts",
            .handler { request in
                let form = Dictionary(
                    String(decoding: request.body, as: UTF8.self).split(separator: "&").map {
                        let pair = $0.split(separator: "=", maxSplits: 1).map {
                            String($0).removingPercentEncoding ?? ""
                        }
                        return (pair[0], pair.count > 1 ? pair[1] : "")
                    }, uniquingKeysWith: { first, _ in first })
                guard request.method == "POST", form["Action"] == "AssumeRoleWithWebIdentity",
                    form["RoleArn"] == role, form["WebIdentityToken"] == "eyJhbGciOiJSUzI1NiJ9.oidc.token",
                    form["RoleSessionName"] == "imago-test", form["Version"] == "2011-06-15"
                else {
                    return LoopbackServer.Response(
                        status: 400,
                        body: Data(
                            "<ErrorResponse><Error><Code>InvalidIdentityToken</Code></Error></ErrorResponse>".utf8))
                }
                return LoopbackServer.Response(status: 200, body: Data(answer.utf8))
            })
        let proxy = try Self.serve(
            origin,
            environment: [
                "AWS_WEB_IDENTITY_TOKEN_FILE": tokenFile.path, "AWS_ROLE_ARN": role,
                "AWS_ROLE_SESSION_NAME": "imago-test",
                "AWS_ENDPOINT_URL_STS": origin.url(for: "/sts").absoluteString,
            ])
        try await Self.expectSignedLoads(proxy, origin: origin)
        #expect(origin.requestCount(for: "/sts") == 1)

        // STS's refusal is a 502 whose cause names STS's code and not the token
        let provider = AWSCredentialProvider(
            source: .webIdentity(
                roleARN: "arn:aws:iam::1:role/other", tokenFile: tokenFile, sessionName: "x",
                stsEndpoint: origin.url(for: "/sts")))
        do {
            _ = try await provider.credentials()
            Issue.record("STS's refusal was taken")
        } catch {
            #expect("\(error)".contains("InvalidIdentityToken") && !"\(error)".contains("oidc.token"), "\(error)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aRoleOfAnotherAccountIsAssumedWithTheCredentialsFound() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let role = "arn:aws:iam::210987654321:role/imago-cross-account"
        let answer = """
            <AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>
            <AccessKeyId>\(Self.key)</AccessKeyId><SecretAccessKey>\(Self.secret)</SecretAccessKey>
            <SessionToken>\(Self.token)</SessionToken>
            <Expiration>\(Date().addingTimeInterval(3600).formatted(.iso8601))</Expiration>
            </Credentials></AssumeRoleResult></AssumeRoleResponse>
            """
        let base = ImageProxyS3SourceTests.credentials
        origin.setRoute(
            "/sts",
            .handler { request in
                let form = request.formFields
                guard request.method == "POST", form["Action"] == "AssumeRole", form["RoleArn"] == role,
                    form["ExternalId"] == "tenant-42", form["RoleSessionName"] == "imago-test",
                    (try? ImageProxyS3SourceTests.verify(request, secret: base.secretAccessKey))
                        == "ok \(base.accessKeyID) eu-west-1 sts"
                else {
                    return LoopbackServer.Response(
                        status: 403,
                        body: Data("<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>".utf8))
                }
                return LoopbackServer.Response(status: 200, body: Data(answer.utf8))
            })
        origin.setRoute("/media/a.jpg", .bytes(try ServerTestImages.jpeg(), contentType: "image/jpeg"))
        let environment = quietCloudEnvironment.merging([
            "AWS_ACCESS_KEY_ID": base.accessKeyID, "AWS_SECRET_ACCESS_KEY": base.secretAccessKey,
            "AWS_ROLE_SESSION_NAME": "imago-test", "AWS_ENDPOINT_URL_STS": origin.url(for: "/sts").absoluteString,
        ]) { $1 }
        let proxy = try servedProxy(
            [
                "--s3", "--s3-region", "eu-west-1", "--s3-endpoint", origin.url(for: "/").absoluteString,
                "--s3-assume-role", role, "--s3-assume-role-external-id", "tenant-42",
            ], environment: environment)
        // The object is signed with the assumed role's credentials, not the base key's
        try await Self.expectSignedLoads(proxy, origin: origin)
        #expect(origin.requestCount(for: "/sts") == 1)

        // Without the external ID the trust policy asks for: a 502, the object not asked for
        let before = origin.requestCount(for: "/media/a.jpg")
        let denied = try servedProxy(
            [
                "--s3", "--s3-region", "eu-west-1", "--s3-endpoint", origin.url(for: "/").absoluteString,
                "--s3-assume-role", role,
            ], environment: environment)
        let response = await denied.respond(to: ServerRequest(method: "GET", path: "/_/w:10/plain/s3://media/a.jpg"))
        #expect(response.status == 502, "\(errorMessage(response))")
        #expect(origin.requestCount(for: "/media/a.jpg") == before)
        // No credentials to assume it with, or an external ID alone: refused at start
        #expect(throws: UsageError.self) {
            try servedProxy(["--s3", "--s3-assume-role", role], environment: quietCloudEnvironment)
        }
        #expect(throws: UsageError.self) {
            try servedProxy(["--s3", "--s3-assume-role-external-id", "x"], environment: environment)
        }
    }

    /// `~/.aws/config` profiles as the SDKs resolve them: a role with a source profile, a credential source or a
    /// web identity token; a credential_process; SSO refused by name; loops refused.
    @Test func configProfilesResolveAsTheSDKsResolveThem() throws {
        let directory = try makeTemporaryDirectory("imago-aws-config")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(
            at: directory.appending(path: ".aws"), withIntermediateDirectories: true)
        try Data(
            """
            [default]
            region = eu-west-1
            s3 =
              addressing_style = path
            [profile base]
            aws_access_key_id = AKIABASE
            aws_secret_access_key = base-secret
            [profile cross]
            role_arn = arn:aws:iam::210987654321:role/reader
            source_profile = base
            external_id = tenant-42
            role_session_name = imago-cross
            region = ap-south-1
            [profile chained]
            role_arn = arn:aws:iam::111111111111:role/second
            source_profile = cross
            [profile self]
            role_arn = arn:aws:iam::1:role/own
            source_profile = self
            aws_access_key_id = AKIASELF
            aws_secret_access_key = self-secret
            [profile loop-a]
            role_arn = arn:aws:iam::1:role/a
            source_profile = loop-b
            [profile loop-b]
            role_arn = arn:aws:iam::1:role/b
            source_profile = loop-a
            [profile on-ec2]
            role_arn = arn:aws:iam::1:role/instance-assumed
            credential_source = Ec2InstanceMetadata
            [profile eks]
            role_arn = arn:aws:iam::1:role/pod
            web_identity_token_file = /var/run/token
            [profile vault]
            credential_process = /usr/local/bin/vault-aws --role images   # a comment
            [profile sso]
            sso_session = corp
            sso_account_id = 1
            [profile orphan]
            role_arn = arn:aws:iam::1:role/nothing
            [sso-session corp]
            sso_start_url = https://corp.awsapps.com/start
            """.utf8
        ).write(to: directory.appending(path: ".aws/config"))
        try Data("[base]\naws_session_token = base-token\n".utf8).write(
            to: directory.appending(path: ".aws/credentials"))
        let environment = ["HOME": directory.path, "AWS_ROLE_SESSION_NAME": "env-session"]
        func found(_ profile: String) throws -> AWSCredentialSource? {
            try AWSCredentialSource.default(
                environment: environment.merging(["AWS_PROFILE": profile]) { $1 },
                systemVendorFile: directory.appending(path: "none"))
        }
        let base = AWSCredentialSource.fixed(
            AWSSigning.Credentials(accessKeyID: "AKIABASE", secretAccessKey: "base-secret", sessionToken: "base-token"))
        #expect(try found("base") == base, "the two files' settings merged")
        let cross = AWSCredentialSource.assumedRole(
            roleARN: "arn:aws:iam::210987654321:role/reader", externalID: "tenant-42", sessionName: "imago-cross",
            stsEndpoint: URL(string: "https://sts.ap-south-1.amazonaws.com")!, region: "ap-south-1", base: base)
        #expect(try found("cross") == cross)
        #expect(
            try found("chained")
                == .assumedRole(
                    roleARN: "arn:aws:iam::111111111111:role/second", externalID: nil, sessionName: "env-session",
                    stsEndpoint: URL(string: "https://sts.amazonaws.com")!, region: "us-east-1", base: cross))
        #expect(
            try found("self")
                == .assumedRole(
                    roleARN: "arn:aws:iam::1:role/own", externalID: nil, sessionName: "env-session",
                    stsEndpoint: URL(string: "https://sts.amazonaws.com")!, region: "us-east-1",
                    base: .fixed(AWSSigning.Credentials(accessKeyID: "AKIASELF", secretAccessKey: "self-secret"))))
        #expect(
            try found("on-ec2")
                == .assumedRole(
                    roleARN: "arn:aws:iam::1:role/instance-assumed", externalID: nil, sessionName: "env-session",
                    stsEndpoint: URL(string: "https://sts.amazonaws.com")!, region: "us-east-1",
                    base: .instanceMetadata(endpoint: AWSCredentialSource.defaultInstanceMetadataEndpoint)))
        #expect(
            try found("eks")
                == .webIdentity(
                    roleARN: "arn:aws:iam::1:role/pod", tokenFile: URL(fileURLWithPath: "/var/run/token"),
                    sessionName: "env-session", stsEndpoint: URL(string: "https://sts.amazonaws.com")!))
        #expect(try found("vault") == .process(command: "/usr/local/bin/vault-aws --role images"))
        #expect(try found("default") == nil, "settings only: the chain goes on")
        for bad in ["loop-a", "orphan"] {
            #expect(throws: AWSCredentialSource.Error.self, "\(bad)") { try found(bad) }
        }
        do {
            _ = try found("sso")
            Issue.record("an SSO profile was taken")
        } catch {
            #expect("\(error)".contains("IAM Identity Center") && "\(error)".contains("credential_process"))
        }
    }

    /// A `credential_process` run for real: its JSON signs the loads, it runs once while the credentials last,
    /// and a failing or silent one is an error that names no secret.
    @Test(.timeLimit(.minutes(1)))
    func aCredentialProcessSignsTheLoads() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let directory = try makeTemporaryDirectory("imago-aws-process")
        defer { try? FileManager.default.removeItem(at: directory) }
        let count = directory.appending(path: "runs")
        let expiration = Date().addingTimeInterval(3600).formatted(.iso8601)
        let script = directory.appending(path: "creds.sh")
        try Data(
            """
            #!/bin/sh
            echo run >> '\(count.path)'
            printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s", "SessionToken": "%s", "Expiration": "%s"}' \\
              '\(Self.key)' '\(Self.secret)' '\(Self.token)' '\(expiration)'
            """.utf8
        ).write(to: script)
        try FileManager.default.createDirectory(
            at: directory.appending(path: ".aws"), withIntermediateDirectories: true)
        try Data("[default]\ncredential_process = sh '\(script.path)'\n".utf8)
            .write(to: directory.appending(path: ".aws/config"))
        let proxy = try Self.serve(origin, environment: ["HOME": directory.path])
        try await Self.expectSignedLoads(proxy, origin: origin)
        #expect(try String(contentsOf: count, encoding: .utf8) == "run\n", "run once while the credentials last")

        for (command, words) in [
            ("exit 3", "status 3"), ("echo '{}'", "Version 1"), ("sleep 30", "ran over"),
            ("exec >&-; sleep 31; true", "ran over"),  // output closed, still running: the whole group is killed
            ("head -c 100000 /dev/zero", "64 KiB"),
        ] {
            let provider = AWSCredentialProvider(source: .process(command: command), timeout: .seconds(1))
            do {
                _ = try await provider.credentials()
                Issue.record("\(command) gave credentials")
            } catch {
                #expect("\(error)".contains(words), "\(command): \(error)")
            }
        }
        // Nothing the commands started is left running (every process's command line, from /proc)
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let sleeping = processes.filter { name in
            guard name.allSatisfy(\.isNumber), let line = FileManager.default.contents(atPath: "/proc/\(name)/cmdline")
            else { return false }
            return [Data("sleep\u{0}30\u{0}".utf8), Data("sleep\u{0}31\u{0}".utf8)].contains(line)
        }
        #expect(sleeping.isEmpty, "still running: \(sleeping)")
    }

    /// imgproxy's `IMGPROXY_ENV_AWS_SECRET_*` and `IMGPROXY_ENV_AWS_SSM_PARAMETERS_*`: a Secrets Manager secret's
    /// `.env` text, then a Parameter Store path's parameters (every page), set over the environment before the
    /// options are read; each call signed, as the independent verifier checks.
    @Test(.timeLimit(.minutes(1)))
    func settingsKeptInAWSAreReadAtStart() async throws {
        let origin = try LoopbackServer()
        defer { origin.stop() }
        let base = ImageProxyS3SourceTests.credentials
        let calls = Locked<[String]>([])
        origin.setRoute(
            "/aws",
            .handler { request in
                let target = request.headers["X-Amz-Target"] ?? ""
                let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] ?? [:]
                let service = target.hasPrefix("secretsmanager") ? "secretsmanager" : "ssm"
                let verified = try? ImageProxyS3SourceTests.verify(request, secret: base.secretAccessKey)
                calls.withLock { $0.append("\(target) \(verified ?? "unverified")") }
                guard verified == "ok \(base.accessKeyID) eu-central-1 \(service)",
                    request.headers["Content-Type"] == "application/x-amz-json-1.1"
                else {
                    return LoopbackServer.Response(
                        status: 400, body: Data(#"{"__type":"com.amazon#AccessDeniedException"}"#.utf8))
                }
                let answer: String
                switch (target, body["SecretId"] as? String, body["NextToken"] as? String) {
                case ("secretsmanager.GetSecretValue", "imago/prod", _):
                    guard body["VersionStage"] as? String == "AWSPREVIOUS" else {
                        return LoopbackServer.Response(status: 400, body: Data("{}".utf8))
                    }
                    answer = #"{"Name":"imago/prod","SecretString":"IMAGO_MAX_AGE=77\n# keys\nIMAGO_KEY=0011\n"}"#
                case ("AmazonSSM.GetParametersByPath", _, nil):
                    guard body["Path"] as? String == "/imago/prod", body["WithDecryption"] as? Bool == true else {
                        return LoopbackServer.Response(status: 400, body: Data("{}".utf8))
                    }
                    answer = """
                        {"Parameters":[{"Name":"/imago/prod/IMAGO_SALT","Value":"22","DataType":"text"},\
                        {"Name":"/imago/prod/nested/X","Value":"1","DataType":"text"},\
                        {"Name":"/imago/prod/AMI","Value":"ami-1","DataType":"aws:ec2:image"}],"NextToken":"page2"}
                        """
                case ("AmazonSSM.GetParametersByPath", _, "page2"):
                    answer = #"{"Parameters":[{"Name":"/imago/prod/IMAGO_MAX_AGE","Value":"88"}]}"#
                default:
                    return LoopbackServer.Response(
                        status: 400, body: Data(#"{"__type":"ResourceNotFoundException"}"#.utf8))
                }
                return LoopbackServer.Response(status: 200, body: Data(answer.utf8))
            })
        let environment = quietCloudEnvironment.merging([
            "AWS_ACCESS_KEY_ID": base.accessKeyID, "AWS_SECRET_ACCESS_KEY": base.secretAccessKey,
            "AWS_REGION": "eu-central-1", "AWS_ENDPOINT_URL": origin.url(for: "/aws").absoluteString,
        ]) { $1 }
        let arguments = [
            "--env-aws-secret-id", "imago/prod", "--env-aws-secret-version-stage", "AWSPREVIOUS",
            "--env-aws-ssm-parameters-path", "/imago/prod",
        ]
        let args = try parseArguments(arguments, options: ServeCommand.command.options)
        let found = try await ServeCommand.cloudEnvironment(args, over: environment)
        #expect(found["IMAGO_KEY"] == "0011" && found["IMAGO_SALT"] == "22" && found["nested_X"] == "1")
        #expect(found["IMAGO_MAX_AGE"] == "88", "the parameters are read after the secret")
        #expect(found["AMI"] == nil, "only text parameters")
        #expect(calls.value.count == 3 && calls.value.allSatisfy { $0.contains(" ok ") }, "\(calls.value)")
        let options = try ServeCommand.parse(args, environment: found)
        #expect(options.maxAge == 88 && options.signer != nil)

        // A refused call names the service's error; no credentials, no call
        let denied = try parseArguments(["--env-aws-secret-id", "other"], options: ServeCommand.command.options)
        do {
            _ = try await ServeCommand.cloudEnvironment(denied, over: environment)
            Issue.record("a missing secret was read")
        } catch {
            #expect("\(error)".contains("ResourceNotFoundException"), "\(error)")
        }
        await #expect(throws: UsageError.self) {
            try await ServeCommand.cloudEnvironment(args, over: quietCloudEnvironment)
        }
        // A version or region without the secret is a usage error, before any call
        let orphan = try parseArguments(["--env-aws-secret-region", "x"], options: ServeCommand.command.options)
        await #expect(throws: UsageError.self) { try await ServeCommand.cloudEnvironment(orphan, over: environment) }
        #expect(calls.value.count == 4, "the missing secret's call only")
    }

    /// imgproxy's `IMGPROXY_CLOUD_WATCH_*`: the gauges are put into CloudWatch every interval, signed for
    /// `monitoring` in the region given, each with the `ServiceName` dimension.
    @Test(.timeLimit(.minutes(1)))
    func gaugesArePutIntoCloudWatch() async throws {
        let cloudWatch = try LoopbackServer()
        defer { cloudWatch.stop() }
        let base = ImageProxyS3SourceTests.credentials
        let puts = Locked<[[String: String]]>([])
        cloudWatch.setRoute(
            "/",
            .handler { request in
                let verified = try? ImageProxyS3SourceTests.verify(request, secret: base.secretAccessKey)
                guard verified == "ok \(base.accessKeyID) ap-south-1 monitoring" else {
                    return LoopbackServer.Response(
                        status: 403,
                        body: Data("<ErrorResponse><Error><Code>InvalidSignature</Code></Error></ErrorResponse>".utf8))
                }
                puts.withLock { $0.append(request.formFields) }
                return LoopbackServer.Response(status: 200, body: Data("<PutMetricDataResponse/>".utf8))
            })
        let directory = try makeTemporaryDirectory("imago-cloudwatch")
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try await InProcessServe.start(
            [
                "--listen", "127.0.0.1:0", "--unsigned", "--cache-dir", directory.path, "--log-format", "off",
                "--workers", "3", "--cloudwatch-service-name", "images", "--cloudwatch-region", "ap-south-1",
                "--cloudwatch-interval", "1",
            ],
            environment: quietCloudEnvironment.merging([
                "AWS_ACCESS_KEY_ID": base.accessKeyID, "AWS_SECRET_ACCESS_KEY": base.secretAccessKey,
                "AWS_ENDPOINT_URL_CLOUDWATCH": cloudWatch.url(for: "/").absoluteString,
            ]) { $1 })
        #expect(await ImagoTesting.eventually(timeout: .seconds(10)) { !puts.value.isEmpty })
        #expect(await serve.stop() == 0)
        let form = try #require(puts.value.first)
        #expect(form["Action"] == "PutMetricData" && form["Version"] == "2010-08-01" && form["Namespace"] == "imago")
        let names = (1...4).map { form["MetricData.member.\($0).MetricName"] ?? "" }
        #expect(names == ["Workers", "RequestsInProgress", "ImagesInProgress", "WorkersUtilization"])
        #expect(form["MetricData.member.1.Value"] == "3.0" && form["MetricData.member.1.Unit"] == "Count")
        #expect(form["MetricData.member.3.Value"] == "0.0" && form["MetricData.member.4.Unit"] == "Percent")
        #expect(
            (1...4).allSatisfy {
                form["MetricData.member.\($0).Dimensions.member.1.Name"] == "ServiceName"
                    && form["MetricData.member.\($0).Dimensions.member.1.Value"] == "images"
            })
        for bad in [
            ["--cloudwatch-namespace", "x"], ["--cloudwatch-service-name", "s", "--cloudwatch-interval", "0"],
        ] {
            #expect(throws: UsageError.self, "\(bad)") {
                try ServeCommand.parse(
                    parseArguments(["--unsigned"] + bad, options: ServeCommand.command.options),
                    environment: quietCloudEnvironment)
            }
        }
    }

    @Test func theDefaultChainIsSearchedInTheSDKsOrder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appending(path: ".aws"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(
            """
            # a comment
            [default]
            aws_access_key_id = AKIADEFAULT
            aws_secret_access_key = default-secret

            [staging]
            AWS_ACCESS_KEY_ID=AKIASTAGING
            aws_secret_access_key=staging-secret
            aws_session_token = staging-token
            [broken]
            aws_access_key_id = AKIANOSECRET
            """.utf8
        ).write(to: directory.appending(path: ".aws/credentials"))
        let ec2 = directory.appending(path: "sys_vendor")
        try Data("Amazon EC2\n".utf8).write(to: ec2)
        let other = directory.appending(path: "other_vendor")
        try Data("QEMU\n".utf8).write(to: other)
        let missing = directory.appending(path: "none")
        func found(_ environment: [String: String], vendor: URL = missing) throws -> AWSCredentialSource? {
            try AWSCredentialSource.default(environment: environment, systemVendorFile: vendor)
        }
        let home = directory.path

        #expect(
            try found(["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "s", "HOME": home])
                == .fixed(AWSSigning.Credentials(accessKeyID: "AKIAENV", secretAccessKey: "s")))
        #expect(
            try found(["HOME": home], vendor: ec2)
                == .fixed(AWSSigning.Credentials(accessKeyID: "AKIADEFAULT", secretAccessKey: "default-secret")))
        #expect(
            try found(["HOME": home, "AWS_PROFILE": "staging"])
                == .fixed(
                    AWSSigning.Credentials(
                        accessKeyID: "AKIASTAGING", secretAccessKey: "staging-secret", sessionToken: "staging-token")))
        #expect(throws: AWSCredentialSource.Error.self) { try found(["HOME": home, "AWS_PROFILE": "broken"]) }
        // A profile the file does not have: the chain goes on
        let identity: [String: String] = [
            "HOME": home, "AWS_PROFILE": "absent", "AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token",
            "AWS_ROLE_ARN": "arn:aws:iam::1:role/r", "AWS_ROLE_SESSION_NAME": "s", "AWS_REGION": "eu-west-3",
        ]
        #expect(
            try found(identity)
                == .webIdentity(
                    roleARN: "arn:aws:iam::1:role/r", tokenFile: URL(fileURLWithPath: "/var/run/token"),
                    sessionName: "s", stsEndpoint: URL(string: "https://sts.eu-west-3.amazonaws.com")!))
        #expect(throws: AWSCredentialSource.Error.self) { try found(["AWS_WEB_IDENTITY_TOKEN_FILE": "/t"]) }
        #expect(
            try found([
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/abc",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN": "t",
            ])
                == .container(
                    url: URL(string: "http://169.254.170.2/v2/credentials/abc")!, authorization: "t",
                    authorizationFile: nil))
        #expect(
            try found(["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.23/v1/credentials"])
                == .container(
                    url: URL(string: "http://169.254.170.23/v1/credentials")!, authorization: nil,
                    authorizationFile: nil))
        // A plain-http full URI elsewhere would send the agent's token anywhere: refused
        for bad in ["http://evil.example/creds", "ftp://127.0.0.1/x"] {
            #expect(throws: AWSCredentialSource.Error.self, "\(bad)") {
                try found(["AWS_CONTAINER_CREDENTIALS_FULL_URI": bad])
            }
        }
        // The metadata service: named, or an EC2 machine, unless disabled
        #expect(
            try found(["AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://[fd00:ec2::254]"])
                == .instanceMetadata(endpoint: URL(string: "http://[fd00:ec2::254]")!))
        #expect(
            try found([:], vendor: ec2)
                == .instanceMetadata(endpoint: AWSCredentialSource.defaultInstanceMetadataEndpoint))
        #expect(try found(["AWS_EC2_METADATA_DISABLED": "true"], vendor: ec2) == nil)
        #expect(try found([:], vendor: other) == nil && found([:]) == nil)
    }
}

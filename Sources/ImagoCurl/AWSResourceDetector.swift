import Foundation
import ImagoCore

/// What OpenTelemetry's AWS resource detectors say about where the process runs, as imgproxy adds to its
/// telemetry: on EC2 the instance (from the instance metadata service's identity document, by IMDSv2), in an ECS
/// task the task and container (from the task metadata endpoint `ECS_CONTAINER_METADATA_URI_V4`), each under
/// OpenTelemetry's semantic conventions (`cloud.*`, `host.*`, `aws.ecs.*`, `aws.log.*`). In an ECS task on EC2
/// both apply, the task's attributes over the instance's. Elsewhere it finds nothing, within its time limit.
///
/// ```swift
/// let attributes = await AWSResourceDetector(environment: ProcessInfo.processInfo.environment).attributes()
/// // cloud.provider = aws, cloud.platform = aws_ec2, host.id = i-0abc…, cloud.region = eu-west-1, …
/// ```
public struct AWSResourceDetector: Sendable {
    /// The instance metadata service asked, or `nil` when `AWS_EC2_METADATA_DISABLED=true`: the address
    /// `AWS_EC2_METADATA_SERVICE_ENDPOINT` gives, else `http://169.254.169.254`.
    public var instanceMetadataEndpoint: URL?
    /// ECS's task metadata endpoint (`ECS_CONTAINER_METADATA_URI_V4`), or `nil` outside ECS.
    public var taskMetadataEndpoint: URL?
    /// How long each service is waited for. Default 1 s: off AWS the instance metadata address may not answer.
    public var timeout: Duration = .seconds(1)

    /// A detector reading its endpoints from `environment` (see the properties).
    public init(environment: [String: String]) {
        if environment.nonEmpty("AWS_EC2_METADATA_DISABLED")?.lowercased() == "true" {
            instanceMetadataEndpoint = nil
        } else {
            instanceMetadataEndpoint =
                (try? AWSCredentialSource.instanceMetadataEndpoint(environment: environment))
                ?? AWSCredentialSource.defaultInstanceMetadataEndpoint
        }
        taskMetadataEndpoint = environment.nonEmpty("ECS_CONTAINER_METADATA_URI_V4").flatMap(URL.init(string:))
    }

    /// The attributes found, the ECS task's over the EC2 instance's; none when neither service answers.
    public func attributes() async -> [TraceSpan.Attribute] {
        async let instance = instanceAttributes()
        async let task = taskAttributes()
        var merged: [String: String] = [:]
        for (key, value) in await instance { merged[key] = value }
        for (key, value) in await task { merged[key] = value }
        return merged.sorted { $0.key < $1.key }.map { TraceSpan.Attribute($0.key, .string($0.value)) }
    }

    /// The largest metadata document read.
    private static let maximumDocumentLength = 1 << 16

    /// An exchange with a metadata service: no proxy, this detector's timeout.
    private func exchange(_ url: URL, fields: [String] = []) -> CurlExchange {
        var exchange = CurlExchange(url: url, fields: fields, timeout: timeout)
        exchange.bypassesProxy = true
        return exchange
    }

    /// The JSON document at `url` (with `fields`) as `type`, or `nil` when the service does not answer 200 with
    /// one.
    private func document<Document: Decodable>(
        _ url: URL, fields: [String] = [], as type: Document.Type
    ) async -> Document? {
        guard let answer = try? await exchange(url, fields: fields).perform(), answer.status == 200,
            answer.data.count <= Self.maximumDocumentLength
        else { return nil }
        return try? JSONDecoder().decode(type, from: answer.data)
    }

    /// EC2's instance identity document, the fields read.
    private struct InstanceIdentity: Decodable {
        var instanceId: String
        var region: String?
        var availabilityZone: String?
        var accountId: String?
        var instanceType: String?
        var imageId: String?
    }

    /// ECS's task metadata (version 4), the fields read.
    private struct TaskMetadata: Decodable {
        var taskARN: String
        var cluster: String?
        var family: String?
        var revision: String?
        var launchType: String?
        var availabilityZone: String?

        enum CodingKeys: String, CodingKey {
            case taskARN = "TaskARN", cluster = "Cluster", family = "Family", revision = "Revision"
            case launchType = "LaunchType", availabilityZone = "AvailabilityZone"
        }
    }

    /// ECS's container metadata (version 4), the fields read.
    private struct ContainerMetadata: Decodable {
        var dockerID: String?
        var name: String?
        var containerARN: String?
        var logDriver: String?
        var logOptions: [String: String]?

        enum CodingKeys: String, CodingKey {
            case dockerID = "DockerId", name = "Name", containerARN = "ContainerARN", logDriver = "LogDriver"
            case logOptions = "LogOptions"
        }
    }

    /// EC2: an IMDSv2 token, the instance identity document and the host name.
    private func instanceAttributes() async -> [String: String] {
        guard let endpoint = instanceMetadataEndpoint else { return [:] }
        guard
            let token = try? await AWSCredentialProvider.instanceMetadataToken(
                at: endpoint, lifetimeSeconds: 60, timeout: timeout)
        else { return [:] }
        let fields = ["X-aws-ec2-metadata-token: " + token]
        guard
            let identity = await document(
                endpoint.appending(path: "latest/dynamic/instance-identity/document"), fields: fields,
                as: InstanceIdentity.self)
        else { return [:] }
        var attributes = ["cloud.provider": "aws", "cloud.platform": "aws_ec2", "host.id": identity.instanceId]
        attributes["cloud.region"] = identity.region
        attributes["cloud.availability_zone"] = identity.availabilityZone
        attributes["cloud.account.id"] = identity.accountId
        attributes["host.type"] = identity.instanceType
        attributes["host.image.id"] = identity.imageId
        if let answer = try? await exchange(endpoint.appending(path: "latest/meta-data/hostname"), fields: fields)
            .perform(), answer.status == 200, answer.data.count <= 255
        {
            let name = String(decoding: answer.data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !name.isEmpty { attributes["host.name"] = name }
        }
        return attributes
    }

    /// ECS: the container's metadata (`${ECS_CONTAINER_METADATA_URI_V4}`) and its task's (`…/task`).
    private func taskAttributes() async -> [String: String] {
        guard let endpoint = taskMetadataEndpoint else { return [:] }
        async let containerDocument = document(endpoint, as: ContainerMetadata.self)
        async let taskDocument = document(endpoint.appending(path: "task"), as: TaskMetadata.self)
        guard let container = await containerDocument, let task = await taskDocument else { return [:] }
        let taskARN = task.taskARN
        var attributes = ["cloud.provider": "aws", "cloud.platform": "aws_ecs", "aws.ecs.task.arn": taskARN]
        // arn:aws:ecs:REGION:ACCOUNT:task/…
        let arn = taskARN.split(separator: ":", omittingEmptySubsequences: false)
        if arn.count >= 6 {
            attributes["cloud.region"] = String(arn[3])
            attributes["cloud.account.id"] = String(arn[4])
        }
        if let cluster = task.cluster {
            attributes["aws.ecs.cluster.arn"] =
                cluster.hasPrefix("arn:") || arn.count < 6
                ? cluster : "arn:aws:ecs:\(arn[3]):\(arn[4]):cluster/\(cluster)"
        }
        attributes["aws.ecs.task.family"] = task.family
        attributes["aws.ecs.task.revision"] = task.revision
        attributes["aws.ecs.launchtype"] = task.launchType?.lowercased()
        attributes["cloud.availability_zone"] = task.availabilityZone
        attributes["aws.ecs.container.arn"] = container.containerARN
        attributes["cloud.resource_id"] = container.containerARN
        attributes["container.id"] = container.dockerID
        attributes["container.name"] = container.name
        if container.logDriver == "awslogs", let options = container.logOptions, let group = options["awslogs-group"] {
            attributes["aws.log.group.names"] = group
            let region = options["awslogs-region"] ?? attributes["cloud.region"]
            if let region, let account = attributes["cloud.account.id"] {
                attributes["aws.log.group.arns"] = "arn:aws:logs:\(region):\(account):log-group:\(group):*"
                if let stream = options["awslogs-stream"] {
                    attributes["aws.log.stream.names"] = stream
                    attributes["aws.log.stream.arns"] =
                        "arn:aws:logs:\(region):\(account):log-group:\(group):log-stream:\(stream)"
                }
            }
        }
        return attributes
    }
}

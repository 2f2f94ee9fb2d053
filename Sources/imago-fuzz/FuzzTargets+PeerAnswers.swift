import Foundation
import ImagoCurl

extension FuzzTargets {
    /// What Imago's own code reads from peers it talks to besides origins: an OTLP collector's answer
    /// (``ProtobufReader``, then the partial success ``OTLPEndpoint`` takes from it) and AWS's shared config and
    /// credentials files (``AWSSharedConfig``, the input written as both files). Properties: a message that parses
    /// with only varint and length-delimited fields parses again to the same fields once ``ProtobufWriter`` has
    /// written them (the reader and the writer agree).
    static func peerAnswers(_ data: Data) {
        let bytes = [UInt8](data)
        if let fields = ProtobufReader.fields(bytes[...]), !fields.contains(where: { $0.value == .fixed }) {
            var writer = ProtobufWriter()
            for field in fields {
                switch field.value {
                case .varint(let value): writer.unsigned(field.number, value)
                case .bytes(let run): writer.data(field.number, run)
                case .fixed: break
                }
            }
            let again = ProtobufReader.fields(writer.bytes[...])
            precondition(
                again.map { $0.map(\.number) == fields.map(\.number) && $0.map(\.value) == fields.map(\.value) }
                    == true,
                "ProtobufWriter wrote \(fields.count) fields that ProtobufReader reads back differently")
        }
        _ = OTLPEndpoint.partialSuccess(in: bytes)
        let file = FileManager.default.temporaryDirectory.appending(path: "imago-fuzz-aws-\(getpid())")
        guard (try? data.write(to: file)) != nil else { return }
        defer { try? FileManager.default.removeItem(at: file) }
        _ = try? AWSSharedConfig(environment: ["AWS_CONFIG_FILE": file.path, "AWS_SHARED_CREDENTIALS_FILE": file.path])
    }
}

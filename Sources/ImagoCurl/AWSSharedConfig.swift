import Foundation
import ImagoCore

/// The AWS tools' shared files, read as the SDKs read them: the credentials file (`AWS_SHARED_CREDENTIALS_FILE`,
/// else `~/.aws/credentials`; sections `[NAME]`) and the config file (`AWS_CONFIG_FILE`, else `~/.aws/config`;
/// sections `[profile NAME]`, and `[default]`). A profile's settings are both files' for its name, the credentials
/// file's winning. Each file is at most 1 MiB; `#` and `;` start comments; keys are compared without case.
///
/// ```swift
/// let files = try AWSSharedConfig(environment: ProcessInfo.processInfo.environment)
/// files.profile("default")?["region"]
/// ```
public struct AWSSharedConfig: Sendable, Hashable {
    /// The settings of each profile, by name.
    public private(set) var profiles: [String: [String: String]] = [:]
    /// The profiles the credentials file has a section for (a profile only the config file names may hold
    /// settings alone, such as its region).
    public private(set) var credentialsFileProfiles: Set<String> = []

    /// The files `environment` names (or `HOME`'s `.aws/credentials` and `.aws/config`); a missing file is empty.
    ///
    /// - Throws: ``AWSCredentialSource/Error`` for a file that is there but cannot be read or is over 1 MiB.
    public init(environment: [String: String]) throws(AWSCredentialSource.Error) {
        let home = environment.nonEmpty("HOME").map { URL(fileURLWithPath: $0) }
        let config =
            environment.nonEmpty("AWS_CONFIG_FILE").map { URL(fileURLWithPath: $0) }
            ?? home?.appending(path: ".aws/config")
        let credentials =
            environment.nonEmpty("AWS_SHARED_CREDENTIALS_FILE").map { URL(fileURLWithPath: $0) }
            ?? home?.appending(path: ".aws/credentials")
        if let config {
            for (section, fields) in try Self.sections(of: config) {
                let name =
                    section == "default"
                    ? "default"
                    : section.hasPrefix("profile ")
                        ? String(
                            section.dropFirst("profile ".count)
                        ).trimmingCharacters(in: .whitespaces) : nil
                guard let name else { continue }  // sso-session and services sections
                profiles[name, default: [:]].merge(fields) { $1 }
            }
        }
        if let credentials {
            for (name, fields) in try Self.sections(of: credentials) {
                credentialsFileProfiles.insert(name)
                profiles[name, default: [:]].merge(fields) { $1 }
            }
        }
    }

    /// The settings of `name`, `nil` when neither file has it.
    public func profile(_ name: String) -> [String: String]? { profiles[name] }

    /// The `[section]`s of the INI file at `file` and their `key = value` settings (keys lowercased); none when the
    /// file is missing.
    static func sections(of file: URL) throws(AWSCredentialSource.Error) -> [(String, [String: String])] {
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        guard let text = FileContents.text(atPath: file.path, limit: 1 << 20) else {
            throw AWSCredentialSource.Error(reason: "'\(file.path)' is not a readable AWS configuration file")
        }
        var sections: [(String, [String: String])] = []
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            // An indented line belongs to a nested setting (`s3 =` then `  addressing_style = path`): none read
            // here is nested.
            if raw.first?.isWhitespace == true { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                sections.append((line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces), [:]))
                continue
            }
            guard !sections.isEmpty, let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if let comment = value.range(of: " #") ?? value.range(of: " ;") {
                value = String(value[..<comment.lowerBound]).trimmingCharacters(in: .whitespaces)
            }
            sections[sections.count - 1].1[name] = value
        }
        return sections
    }
}

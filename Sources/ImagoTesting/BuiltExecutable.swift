import Foundation

extension ImagoTesting {
    /// A built executable of this package, for tests that run one as a child process: `$environmentVariable`
    /// when set, else `name` beside the test bundle in the build products directory (where
    /// `swift build --build-tests` puts every executable), else `.build/debug` or `.build/release` of the package
    /// root (three folders above `filePath`). `nil` when none is an executable file.
    ///
    /// ```swift
    /// let tool = try #require(ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI"))
    /// ```
    public static func builtExecutable(
        named name: String, environmentVariable: String, filePath: String = #filePath
    ) -> URL? {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment[environmentVariable] {
            candidates.append(URL(fileURLWithPath: path))
        }
        let starts = [Bundle.main.bundleURL, Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        for start in starts.compactMap({ $0 }) {
            var directory = start.standardizedFileURL
            for _ in 0..<4 {
                directory = directory.deletingLastPathComponent()
                candidates.append(directory.appendingPathComponent(name))
            }
        }
        let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            candidates.append(root.appendingPathComponent(".build/\(configuration)/\(name)"))
        }
        return candidates.first { url in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
                && !isDirectory.boolValue && FileManager.default.isExecutableFile(atPath: url.path)
        }
    }
}

import Foundation

extension ImagoTesting {
    /// A built executable of this package, for tests that run one as a child process: `$environmentVariable`
    /// when set, else `name` beside the test bundle in the build products directory (where
    /// `swift build --build-tests` puts every executable), else `.build/debug` or `.build/release` of the package
    /// root (three folders above `filePath`). With `preferringPlainBuild`, `.build/debug/NAME` of the package root
    /// comes right after `$environmentVariable`: a test that measures the child (its memory, its time) wants the
    /// plain build, not the sanitizer build beside the tests under `make test-tsan`. `nil` when none is an
    /// executable file.
    ///
    /// ```swift
    /// let tool = try #require(ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI"))
    /// ```
    public static func builtExecutable(
        named name: String, environmentVariable: String, preferringPlainBuild: Bool = false,
        filePath: String = #filePath
    ) -> URL? {
        var candidates: [URL] = []
        if let path = ProcessInfo.processInfo.environment[environmentVariable] {
            candidates.append(URL(fileURLWithPath: path))
        }
        let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        if preferringPlainBuild { candidates.append(root.appendingPathComponent(".build/debug/\(name)")) }
        let starts = [Bundle.main.bundleURL, Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        for start in starts.compactMap({ $0 }) {
            var directory = start.standardizedFileURL
            for _ in 0..<4 {
                directory = directory.deletingLastPathComponent()
                candidates.append(directory.appendingPathComponent(name))
            }
        }
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

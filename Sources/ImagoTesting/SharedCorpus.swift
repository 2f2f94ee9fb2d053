import Foundation

/// The shared image corpus the tests read in place: `../shared/corpus` beside the package root, found from this
/// file's path in the source tree (so it works from any test target and any working directory).
public enum SharedCorpus {
    /// The corpus folder.
    public static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // ImagoTesting
        .deletingLastPathComponent()  // Sources
        .deletingLastPathComponent()  // the package
        .deletingLastPathComponent().appendingPathComponent("shared/corpus")

    /// The corpus item at `path` (a file or folder, e.g. `gif/samples/moon_impact.gif`), and, when it is missing,
    /// the sentence a test records so that it fails loudly instead of passing vacuously.
    public static func item(_ path: String) -> (url: URL, missing: String?) {
        let url = root.appendingPathComponent(path)
        guard !FileManager.default.fileExists(atPath: url.path) else { return (url, nil) }
        return (url, "the image corpus item \(url.path) is missing; it must sit at ../shared/corpus beside the package")
    }
}

import Foundation
import Testing

/// The shared image corpus, found relative to this package's root (`../shared/corpus`). Fails the test loudly
/// when it is missing rather than passing vacuously.
func corpusURL(_ subfolder: String, filePath: String = #filePath) -> URL {
    let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let url = root.deletingLastPathComponent().appendingPathComponent("shared/corpus/\(subfolder)")
    var isDirectory: ObjCBool = false
    if !FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) || !isDirectory.boolValue {
        Issue.record(
            "the image corpus folder \(url.path) is missing; it must sit at ../shared/corpus beside the package")
    }
    return url
}

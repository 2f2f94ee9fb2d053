import Foundation
import ImagoTesting
import Testing

/// The shared image corpus, found relative to this package's root (`../shared/corpus`). Fails the test loudly
/// when it is missing rather than passing vacuously.
func corpusURL(_ subfolder: String) -> URL {
    let (url, missing) = SharedCorpus.item(subfolder)
    if let missing { Issue.record(Comment(rawValue: missing)) }
    return url
}

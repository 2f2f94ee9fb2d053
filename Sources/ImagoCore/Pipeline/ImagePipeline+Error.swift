import Foundation

extension ImagePipeline {
    /// Why a request failed.
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The loader failed (`url` is the loaded URL; `underlying` says how).
        case dataLoadingFailed(url: URL, underlying: DataLoadingError)
        /// A custom ``ImageRequest/Source/loader(id:_:)`` closure threw (`reason` is its error's description).
        case dataSourceFailed(id: String, reason: String)
        /// The bytes could not be decoded. `source` is the redacted URL or the custom source's id.
        case decodingFailed(source: String, underlying: CodecError)
        /// A processor threw. `identifier` names it; `reason` is its error's description.
        case processingFailed(identifier: String, reason: String)
        /// The request said ``ImageRequest/Options/skipsLoading`` and no cache held the image (`source` as above).
        case notCached(String)
        /// The request was cancelled (only the async API reports this; callbacks are simply not called).
        case cancelled
        /// The failure cache remembers that loading `url` failed recently for `reason`; it is not tried again
        /// before `until` (pass ``ImageRequest/Options/skipsFailureCacheReads`` to try anyway).
        case failedRecently(url: URL, until: Date, reason: FailureCache.Reason)
        /// The pipeline was shut down with ``ImagePipeline/invalidate()``: it starts no load any more.
        case invalidated
        /// The request was made from text that is not a URL (``ImageRequest/Source/invalidURL(_:)``).
        case invalidURL(String)

        /// The HTTP status the server answered, when the failure was one (also a remembered one), else `nil`.
        public var statusCode: Int? {
            switch self {
            case .dataLoadingFailed(_, .statusCode(let code, _)): code
            case .failedRecently(_, _, .http(let code)): code
            default: nil
            }
        }

        /// A sentence a person can act on.
        public var description: String {
            switch self {
            case .dataLoadingFailed(_, let underlying): "could not load the image: \(underlying)"
            case .dataSourceFailed(let id, let reason): "the custom data source '\(id)' failed: \(reason)"
            case .decodingFailed(let source, let underlying): "could not decode \(source): \(underlying)"
            case .processingFailed(let identifier, let reason): "processor \(identifier) failed: \(reason)"
            case .notCached(let source):
                "\(source) is in no cache and the request is cache-only (drop .skipsLoading to load it)"
            case .cancelled: "the request was cancelled"
            case .failedRecently(let url, let until, let reason):
                "loading \(url.redactedString) failed recently: \(reason); it is not tried again before \(until) "
                    + "unless the request uses .skipsFailureCacheReads"
            case .invalidated: "the pipeline was invalidated (shut down); make a new pipeline to load images"
            case .invalidURL(let text): "'\(text)' is not a URL; make the request from a valid URL"
            }
        }

        /// The case without its payload, for counters (``ImagePipeline/Statistics/failures``) and `switch`es.
        public enum Kind: Sendable, Hashable, CaseIterable, CustomStringConvertible {
            /// ``Error/dataLoadingFailed(url:underlying:)``.
            case dataLoadingFailed
            /// ``Error/dataSourceFailed(id:reason:)``.
            case dataSourceFailed
            /// ``Error/decodingFailed(source:underlying:)``.
            case decodingFailed
            /// ``Error/processingFailed(identifier:reason:)``.
            case processingFailed
            /// ``Error/notCached(_:)``.
            case notCached
            /// ``Error/cancelled``.
            case cancelled
            /// ``Error/failedRecently(url:until:reason:)``.
            case failedRecently
            /// ``Error/invalidated``.
            case invalidated
            /// ``Error/invalidURL(_:)``.
            case invalidURL

            /// The case name (`"dataLoadingFailed"`, …).
            public var description: String {
                switch self {
                case .dataLoadingFailed: "dataLoadingFailed"
                case .dataSourceFailed: "dataSourceFailed"
                case .decodingFailed: "decodingFailed"
                case .processingFailed: "processingFailed"
                case .notCached: "notCached"
                case .cancelled: "cancelled"
                case .failedRecently: "failedRecently"
                case .invalidated: "invalidated"
                case .invalidURL: "invalidURL"
                }
            }
        }

        /// The case without its payload, for counters.
        public var kind: Kind {
            switch self {
            case .dataLoadingFailed: .dataLoadingFailed
            case .dataSourceFailed: .dataSourceFailed
            case .decodingFailed: .decodingFailed
            case .processingFailed: .processingFailed
            case .notCached: .notCached
            case .cancelled: .cancelled
            case .failedRecently: .failedRecently
            case .invalidated: .invalidated
            case .invalidURL: .invalidURL
            }
        }
    }
}

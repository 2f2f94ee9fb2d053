extension ImagePipeline {
    /// What happened inside a pipeline, for observers (``ImagePipeline/events()``) and the logger. Sources are
    /// named by redacted URL (no credentials) or custom id.
    public enum Event: Sendable, CustomStringConvertible {
        /// A task started.
        case taskStarted(taskID: Int, source: String)
        /// The memory cache answered.
        case memoryCacheHit(source: String)
        /// The memory cache missed.
        case memoryCacheMiss(source: String)
        /// The disk cache had an entry (`isStale`: past its freshness).
        case diskCacheHit(source: String, isStale: Bool)
        /// The disk cache had no entry.
        case diskCacheMiss(source: String)
        /// A request joined work in flight at `stage`.
        case coalesced(stage: Stage, source: String)
        /// A load started.
        case loadStarted(source: String)
        /// A load finished with `bytes` bytes.
        case loadFinished(source: String, bytes: Int, duration: Duration)
        /// A load failed.
        case loadFailed(source: String, error: ImagePipeline.Error)
        /// An image was decoded (`isPreview`: from partial data).
        case decoded(source: String, duration: Duration, isPreview: Bool)
        /// A processor ran.
        case processed(identifier: String, duration: Duration)
        /// Bytes were written to the disk cache.
        case storedOnDisk(source: String, bytes: Int)
        /// A stale entry was revalidated: `notModified` (304) or replaced by a new body.
        case revalidated(source: String, notModified: Bool)
        /// The shared tier (``Configuration/sharedCache``) had an entry.
        case sharedCacheHit(source: String)
        /// The shared tier had no entry.
        case sharedCacheMiss(source: String)
        /// The shared tier failed; the pipeline went on with its local tiers.
        case sharedCacheFailed(source: String, error: SharedCacheError)
        /// Bytes were written to the shared tier.
        case storedInSharedCache(source: String, bytes: Int)
        /// A task delivered its result.
        case taskFinished(taskID: Int, source: String, result: Result<ImageResponse.Source, ImagePipeline.Error>)

        /// One line describing the event.
        public var description: String {
            switch self {
            case .taskStarted(let id, let source): "task \(id) started: \(source)"
            case .memoryCacheHit(let source): "memory cache hit: \(source)"
            case .memoryCacheMiss(let source): "memory cache miss: \(source)"
            case .diskCacheHit(let source, let stale): "disk cache hit\(stale ? " (stale)" : ""): \(source)"
            case .diskCacheMiss(let source): "disk cache miss: \(source)"
            case .coalesced(let stage, let source): "joined \(stage) in flight: \(source)"
            case .loadStarted(let source): "load started: \(source)"
            case .loadFinished(let source, let bytes, let d): "loaded \(bytes) bytes in \(d): \(source)"
            case .loadFailed(let source, let error): "load failed: \(source): \(error)"
            case .decoded(let source, let d, let preview): "decoded\(preview ? " preview" : "") in \(d): \(source)"
            case .processed(let id, let d): "processed \(id) in \(d)"
            case .storedOnDisk(let source, let bytes): "stored \(bytes) bytes on disk: \(source)"
            case .sharedCacheHit(let source): "shared cache hit: \(source)"
            case .sharedCacheMiss(let source): "shared cache miss: \(source)"
            case .sharedCacheFailed(let source, let error): "shared cache failed: \(source): \(error)"
            case .storedInSharedCache(let source, let bytes): "stored \(bytes) bytes in the shared cache: \(source)"
            case .revalidated(let source, let notModified):
                "revalidated \(source): \(notModified ? "not modified" : "new content")"
            case .taskFinished(let id, let source, let result):
                switch result {
                case .success(let layer): "task \(id) finished from \(layer): \(source)"
                case .failure(let error): "task \(id) failed: \(source): \(error)"
                }
            }
        }

        /// The level a logger should record it at.
        public var level: LogRecord.Level {
            switch self {
            case .loadFailed, .sharedCacheFailed: .warning
            case .taskFinished(_, _, .failure(let error)): error == .cancelled ? .debug : .warning
            case .taskStarted, .taskFinished, .loadStarted, .loadFinished, .revalidated: .info
            default: .debug
            }
        }
    }
}

/// One line for a logger: what happened and how much it matters.
public struct LogRecord: Sendable, CustomStringConvertible {
    /// How much a record matters.
    public enum Level: Int, Sendable, Hashable, Comparable {
        /// Cache hits, decodes, joins: very frequent.
        case debug
        /// Tasks, loads, revalidations.
        case info
        /// Failures.
        case warning

        /// Orders by importance.
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// How much it matters.
    public var level: Level
    /// The event it records.
    public var event: ImagePipeline.Event
    /// The event's one-line description (URLs redacted).
    public var message: String { event.description }
    /// `[level] message`.
    public var description: String { "[\(level)] \(message)" }
}

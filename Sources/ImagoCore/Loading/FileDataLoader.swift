import Foundation

/// Loads `file:` URLs from the local file system. Opt-in: no default configuration includes it, since letting
/// remote input name local files is a risk; add it to a ``CompositeDataLoader`` when you need it, ideally with
/// ``allowedDirectories`` set.
///
/// The response has status 200 and the file's bytes. A missing, unreadable or disallowed file fails with
/// ``DataLoadingError/unreadable(url:reason:)``; one larger than ``maximumBodySize`` with `.bodyTooLarge`.
/// Files are read on the process's queue for blocking work, 4 at once and by the request's priority, never inside
/// `load` and never on the threads of Swift's executor. Thread-safe.
///
/// ```swift
/// let files = FileDataLoader(allowedDirectories: [URL(fileURLWithPath: "/srv/images")])
/// ```
public struct FileDataLoader: DataLoading {
    /// Directories the files must be inside (after resolving symbolic links), or `nil` for any. Default `nil`.
    public var allowedDirectories: [URL]?
    /// The largest file read; larger fails with `.bodyTooLarge`. Default 64 MiB.
    public var maximumBodySize: Int64

    /// A loader restricted to `allowedDirectories` (default `nil`: anywhere) and `maximumBodySize` (default 64 MiB).
    public init(allowedDirectories: [URL]? = nil, maximumBodySize: Int64 = 64 << 20) {
        self.allowedDirectories = allowedDirectories?.map { $0.standardizedFileURL.resolvingSymlinksInPath() }
        self.maximumBodySize = maximumBodySize
    }

    /// Reads the file off the caller's thread (on the queue for blocking work) and delivers `.finished` or `.failed`.
    public func load(
        _ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void
    )
        -> any DataLoadTask
    {
        let loader = self
        return OneShotLoadTask(handler: handler, queue: WorkQueue.blocking, priority: request.priority) {
            loader.read(request.url)
        }
    }

    /// Reads `url` synchronously, applying the directory and size limits.
    public func read(_ url: URL) -> Result<DataResponse, DataLoadingError> {
        guard url.isFileURL else { return .failure(.unsupportedScheme(url: url)) }
        let resolved = url.standardizedFileURL.resolvingSymlinksInPath()
        if let allowedDirectories {
            let path = resolved.path
            let isAllowed = allowedDirectories.contains { directory in
                let base = directory.path.hasSuffix("/") ? directory.path : directory.path + "/"
                return path.hasPrefix(base)
            }
            guard isAllowed else {
                return .failure(.unreadable(url: url, reason: "the file is outside the allowed directories"))
            }
        }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: resolved.path)
        } catch {
            return .failure(.unreadable(url: url, reason: "no such file or no permission to read it"))
        }
        if let type = attributes[.type] as? FileAttributeType, type != .typeRegular {
            return .failure(.unreadable(url: url, reason: "not a regular file"))
        }
        if let size = (attributes[.size] as? NSNumber)?.int64Value, size > maximumBodySize {
            return .failure(.bodyTooLarge(url: url, limit: maximumBodySize))
        }
        do {
            let data = try FileContents.bytes(atPath: resolved.path, limit: Int(clamping: maximumBodySize))
            guard Int64(data.count) <= maximumBodySize else {
                return .failure(.bodyTooLarge(url: url, limit: maximumBodySize))
            }
            return .success(DataResponse(data: data, url: url, statusCode: 200))
        } catch {
            return .failure(.unreadable(url: url, reason: SystemReason.of(error)))
        }
    }
}

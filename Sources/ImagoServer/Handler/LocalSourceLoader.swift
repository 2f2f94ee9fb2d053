import Foundation
import Imago

/// Loads `local:///path` sources from files under one directory (imgproxy's `IMGPROXY_LOCAL_FILESYSTEM_ROOT`) and
/// hands every other URL to `remote`.
///
/// The path is taken below ``root`` whatever it says: `..` segments and symbolic links that lead outside it, like
/// a file that does not exist or is not a regular file, are answered as HTTP 404 would be (nothing tells a client
/// what lies outside the root). Files over ``maximumBodySize`` fail as too large. Reads run off the caller's thread
/// (``FileDataLoader``).
package struct LocalSourceLoader: DataLoading {
    /// The directory `local:` paths are read from, symbolic links resolved.
    package let root: URL
    /// Loads every URL that is not `local:`.
    let remote: any DataLoading
    /// The largest file read. Default 64 MiB.
    let maximumBodySize: Int64
    private let files: FileDataLoader

    /// A loader of `local:` paths under `root` (at most `maximumBodySize` bytes each, default 64 MiB), and of other
    /// URLs through `remote`.
    package init(root: URL, remote: any DataLoading, maximumBodySize: Int64 = 64 << 20) {
        let resolved = root.standardizedFileURL.resolvingSymlinksInPath()
        self.root = resolved
        self.remote = remote
        self.maximumBodySize = maximumBodySize
        files = FileDataLoader(allowedDirectories: [resolved], maximumBodySize: maximumBodySize)
    }

    package func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void) -> any DataLoadTask
    {
        guard request.url.scheme?.lowercased() == "local" else { return remote.load(request, handler: handler) }
        let url = request.url
        let file = fileURL(for: url)
        let files = files
        return OneShotLoadTask(handler: handler, queue: WorkQueue.blocking, priority: request.priority) {
            guard let file, FileManager.default.fileExists(atPath: file.path) else {
                return .failure(.statusCode(404, url: url))
            }
            switch files.read(file) {
            case .success(let response): return .success(DataResponse(data: response.data, url: url))
            case .failure(.bodyTooLarge): return .failure(.bodyTooLarge(url: url, limit: maximumBodySize))
            case .failure: return .failure(.statusCode(404, url: url))  // outside the root, not a file, unreadable
            }
        }
    }

    /// The file a `local:` URL names under ``root``; `nil` when its path leaves the root.
    package func fileURL(for url: URL) -> URL? {
        let path = url.path(percentEncoded: false)
        guard !path.isEmpty, !path.contains("\0") else { return nil }
        let file = root.appendingPathComponent(path).standardizedFileURL
        let base = root.path.hasSuffix("/") ? root.path : root.path + "/"
        return file.path.hasPrefix(base) ? file : nil
    }
}

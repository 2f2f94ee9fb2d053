import Foundation

/// Routes each request to a loader by URL scheme, so one configuration can load `http(s):`, `data:` and (opt-in)
/// `file:` URLs. A scheme with no loader fails with ``DataLoadingError/unsupportedScheme(url:)``.
///
/// ```swift
/// let loader = CompositeDataLoader(["http": http, "https": http, "data": DataURLLoader(),
///                                   "file": FileDataLoader(allowedDirectories: [assets])])
/// ```
public struct CompositeDataLoader: DataLoading {
    /// The loader per lowercase scheme.
    public let loaders: [String: any DataLoading]

    /// A router over `loaders`, keyed by scheme (case-insensitive).
    public init(_ loaders: [String: any DataLoading]) {
        var lowered: [String: any DataLoading] = [:]
        for (scheme, loader) in loaders { lowered[scheme.lowercased()] = loader }
        self.loaders = lowered
    }

    /// `http`/`https` through `http` (default a new ``HTTPDataLoader``) and `data` through ``DataURLLoader``;
    /// `file` only when `files` is given (default `nil`).
    public static func standard(http: any DataLoading = HTTPDataLoader(), files: FileDataLoader? = nil) -> Self {
        var loaders: [String: any DataLoading] = ["http": http, "https": http, "data": DataURLLoader()]
        if let files { loaders["file"] = files }
        return CompositeDataLoader(loaders)
    }

    /// Hands `request` to the loader for its scheme.
    public func load(
        _ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void
    )
        -> any DataLoadTask
    {
        guard let scheme = request.url.scheme?.lowercased(), let loader = loaders[scheme] else {
            return OneShotLoadTask.failing(.unsupportedScheme(url: request.url), handler: handler)
        }
        return loader.load(request, handler: handler)
    }
}

extension CompositeDataLoader: ResumeStoreAdopting {
    /// Hands `store` to every routed loader that keeps interrupted bodies.
    package func adoptResumeStore(_ store: any ResumeStoring) {
        for loader in loaders.values { (loader as? any ResumeStoreAdopting)?.adoptResumeStore(store) }
    }
}

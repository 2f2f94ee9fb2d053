import Foundation

extension ImagePipeline {
    /// The pipeline most programs need: ``ImagePipeline/Configuration/withDefaults(diskCacheDirectory:)``.
    /// Made on first use.
    public static let shared = ImagePipeline(configuration: .withDefaults())

    /// Where ``shared`` keeps its disk cache: `$XDG_CACHE_HOME/imago/images`, else `~/.cache/imago/images`.
    public static var defaultDiskCacheDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("imago/images")
    }
}

extension ImagePipeline.Configuration {
    /// A configuration with everything Imago ships: an ``HTTPDataLoader``, a ``MemoryCache``, a ``DiskCache`` in
    /// `diskCacheDirectory` (none when `nil` or when the directory cannot be opened), and every decoder and encoder
    /// (JPEG, PNG, GIF, WebP). Every other field at its default.
    public static func withDefaults(
        diskCacheDirectory: URL? = ImagePipeline.defaultDiskCacheDirectory
    ) -> ImagePipeline.Configuration {
        var configuration = ImagePipeline.Configuration(
            dataCache: diskCacheDirectory.flatMap { try? DiskCache(directory: $0) })
        configuration.decoders = .makeDefault()
        configuration.encoders = .makeDefault()
        return configuration
    }
}

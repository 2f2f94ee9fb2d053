import Foundation
@_exported import ImagoCodecs
@_exported import ImagoCore
@_exported import ImagoCurl

extension ImageDecoderRegistry {
    /// A new registry with every codec Imago ships (JPEG, PNG, APNG, GIF, WebP, BMP, ICO, …) registered.
    public static func makeDefault() -> ImageDecoderRegistry { ImageDecoderRegistry(ImagoCodecs.decoders) }
}

extension ImageEncoderRegistry {
    /// A new registry with every encoder Imago ships (JPEG, PNG, WebP, GIF, AVIF, JPEG XL, HEIC, TIFF, BMP, ICO)
    /// registered.
    public static func makeDefault() -> ImageEncoderRegistry { ImageEncoderRegistry(ImagoCodecs.encoders) }
}

extension ImagePipeline.Configuration {
    /// A configuration ready to use: every codec registered, a ``MemoryCache``, a ``CurlDataLoader`` (http and
    /// https only, HTTP/2 over TLS, address policy `.any`) whose `Accept` header lists the formats the decoders
    /// read (``ImageDecoderRegistry/acceptHeader``), and a ``DiskCache`` in `diskCacheDirectory` when one is given.
    /// ``HTTPDataLoader`` (URLSession) stays available as the portable loader.
    ///
    /// - Parameters:
    ///   - diskCacheDirectory: where the disk cache lives (created `0700`); default `nil`: no disk cache.
    ///   - diskCacheSizeLimit: the disk cache's size limit in bytes; default 256 MB.
    /// - Throws: ``DiskCache/Error`` when the directory cannot be created or written.
    public static func withDefaults(
        diskCacheDirectory: URL? = nil, diskCacheSizeLimit: Int = 256 << 20
    ) throws
        -> ImagePipeline.Configuration
    {
        var diskCache: DiskCache?
        if let diskCacheDirectory {
            var diskConfiguration = DiskCache.Configuration()
            diskConfiguration.sizeLimit = diskCacheSizeLimit
            diskCache = try DiskCache(directory: diskCacheDirectory, configuration: diskConfiguration)
        }
        // Its registries already hold every codec (ImagoDefaultCodecs is the program's default provider).
        var configuration = ImagePipeline.Configuration(dataCache: diskCache)
        // Content negotiation: ask for the formats the registered decoders read, AVIF and WebP first.
        var loader = HTTPDataLoader.Configuration()
        loader.acceptImages(decodableBy: configuration.decoders)
        configuration.dataLoader = CurlDataLoader(configuration: CurlDataLoader.Configuration(loading: loader))
        return configuration
    }

    /// ``withDefaults(diskCacheDirectory:diskCacheSizeLimit:)`` that also loads `file:` URLs inside
    /// `localDirectories` (and `data:` URLs), through a ``CompositeDataLoader`` with a sandboxed
    /// ``FileDataLoader``: a file outside those directories fails to load. Local images are never copied into the
    /// disk cache.
    ///
    /// ```swift
    /// let configuration = try ImagePipeline.Configuration.withDefaults(localDirectories: [assets])
    /// ```
    public static func withDefaults(
        diskCacheDirectory: URL? = nil, diskCacheSizeLimit: Int = 256 << 20, localDirectories: [URL]
    ) throws -> ImagePipeline.Configuration {
        var configuration = try withDefaults(
            diskCacheDirectory: diskCacheDirectory, diskCacheSizeLimit: diskCacheSizeLimit)
        configuration.dataLoader = CompositeDataLoader.standard(
            http: configuration.dataLoader,
            files: FileDataLoader(allowedDirectories: localDirectories))
        return configuration
    }

    /// The default cache directory: `$XDG_CACHE_HOME/imago`, else `~/.cache/imago`.
    public static func defaultCacheDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    )
        -> URL
    {
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty, xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("imago")
        }
        let home = environment.nonEmpty("HOME") ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".cache/imago")
    }
}

extension ImagePipeline {
    /// The shared pipeline: every codec, a memory cache, and a disk cache in the default cache directory
    /// (``ImagePipeline/Configuration/defaultCacheDirectory(environment:)``); without a disk cache if that
    /// directory cannot be used. Created on first use.
    public static let shared: ImagePipeline = {
        let configuration =
            (try? ImagePipeline.Configuration.withDefaults(
                diskCacheDirectory: ImagePipeline.Configuration.defaultCacheDirectory()))
            ?? (try? ImagePipeline.Configuration.withDefaults()) ?? ImagePipeline.Configuration()
        return ImagePipeline(configuration: configuration)
    }()
}

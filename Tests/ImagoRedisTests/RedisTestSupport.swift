import Foundation
import Imago
import ImagoCore
import ImagoRedis
import ImagoTesting

/// Real images and the built `imago` for the Redis tests.
enum RedisTestSupport {
    /// A small opaque PNG whose colour depends on `seed` (distinct bytes per image).
    static func png(seed: Int, size: Int = 32) throws -> Data {
        var image = try PixelBuffer(width: size, height: size)
        for y in 0..<size {
            for x in 0..<size {
                image[pixel: x, y] = RGBA(r: UInt8(seed & 0xFF), g: UInt8((seed >> 8) & 0xFF), b: UInt8(x * 4), a: 255)
            }
        }
        return try ImageEncoderRegistry.makeDefault().encode(image, as: .png)
    }

    /// A pipeline with the default codecs, its own memory and disk caches (in `directory`), and `shared`.
    static func pipeline(shared: RedisCache?, directory: URL) throws -> ImagePipeline {
        var configuration = try ImagePipeline.Configuration.withDefaults(diskCacheDirectory: directory)
        configuration.sharedCache = shared
        configuration.failureCache = nil
        return ImagePipeline(configuration: configuration)
    }

    /// A fresh scratch folder.
    static func scratch() -> URL {
        let url = URL(fileURLWithPath: "/tmp").appendingPathComponent("imago-redis-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The built `imago` executable (``ImagoTesting/builtExecutable(named:environmentVariable:preferringPlainBuild:filePath:)``;
    /// `$IMAGO_CLI` overrides).
    static func imagoExecutable(filePath: String = #filePath) -> URL? {
        ImagoTesting.builtExecutable(named: "imago", environmentVariable: "IMAGO_CLI", filePath: filePath)
    }
}

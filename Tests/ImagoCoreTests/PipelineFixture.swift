import Foundation
import ImagoCore
import ImagoTesting

/// A pipeline wired to counting mocks, with helpers to serve test images.
struct PipelineFixture {
    let loader: MockDataLoader
    let decoder = MockImageDecoder()
    let encoder = MockImageEncoder()
    let imageCache = MockImageCache()
    let dataCache = MockDataCache()
    let pipeline: ImagePipeline

    init(
        loader: MockDataLoader = MockDataLoader(), memory: Bool = true, disk: Bool = true,
        _ configure: (inout ImagePipeline.Configuration) -> Void = { _ in }
    ) {
        self.loader = loader
        var configuration = ImagePipeline.Configuration(dataLoader: loader)
        configuration.decoders = ImageDecoderRegistry([decoder])
        configuration.encoders = ImageEncoderRegistry([encoder])
        configuration.imageCache = memory ? imageCache : nil
        configuration.dataCache = disk ? dataCache : nil
        configure(&configuration)
        pipeline = ImagePipeline(configuration: configuration)
    }

    /// Serves a `width`×`height` test image of `color` at `url` and returns its bytes.
    @discardableResult
    func serve(
        _ url: URL, width: Int = 8, height: Int = 6, color: RGBA = .init(r: 10, g: 20, b: 30, a: 255),
        headers: [String: String] = [:], payload: Int = 0
    ) -> Data {
        let data = MockImageDecoder.make(width: width, height: height, color: color, payloadCount: payload)
        loader.setResponse(data, for: url, headers: headers)
        return data
    }

    /// A fixture that streams `url` (a large test image) in 10 chunks, held at the loader until released, and
    /// decodes one image at a time with `.incremental` previews: the first preview decode is queued before the
    /// final one and so runs first (with two at once, a slow preview — seen under TSan — can finish after the final
    /// image and is then rightly dropped). The test format is not a progressive JPEG: since issue 23 item 5, its
    /// top-down previews need the `.incremental` policy.
    static func streamingPreviews(of url: URL) -> PipelineFixture {
        let f = PipelineFixture(loader: MockDataLoader(chunkCount: 10)) {
            $0.maximumConcurrentDecodes = 1
            $0.previewPolicy = .incremental
        }
        f.serve(url, payload: 10_000)
        f.loader.hold(url)
        return f
    }

    /// Waits until the disk cache holds `key` (disk writes happen after delivery).
    func waitForDisk(_ key: String) async -> Bool {
        let cache = dataCache
        return await ImagoTesting.eventually { cache.containsData(for: key) }
    }
}

func testURL(_ name: String) -> URL { URL(string: "https://example.com/\(name)")! }

/// Collects values from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

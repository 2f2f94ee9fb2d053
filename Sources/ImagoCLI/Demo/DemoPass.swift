import Foundation
import Imago

/// One pass of the demo over the whole gallery: every image requested through the pipeline with at most
/// `concurrency` in flight, counted by the layer it came from.
struct DemoPass {
    struct Result {
        var name: String
        var seconds: Double = 0
        var images = 0
        var sources: [ImageResponse.Source: Int] = [:]
        var coalesced = 0
        var failures: [String] = []
        var thumbnails: [PixelBuffer] = []
    }

    let name: String
    let pipeline: ImagePipeline
    let requests: [ImageRequest]
    /// How many of the first requests are also issued a second time at once (two views showing one image), to
    /// show coalescing.
    let duplicated: Int
    let concurrency: Int

    func run(display: ProgressDisplay?) async -> Result {
        var result = Result(name: name)
        let started = ContinuousClock.now
        let jobs = requests.enumerated().map { ($0.offset, $0.element) }
        var iterator = jobs.makeIterator()
        await withTaskGroup(of: [Outcome].self) { group in
            func enqueue() {
                guard let (index, request) = iterator.next() else { return }
                let copies = index < duplicated ? 2 : 1
                group.addTask {
                    await Self.load(request, id: index, copies: copies, pipeline: pipeline, display: display)
                }
            }
            for _ in 0..<concurrency { enqueue() }
            for await outcomes in group {
                for outcome in outcomes {
                    result.images += 1
                    switch outcome.result {
                    case .success(let response):
                        result.sources[response.source, default: 0] += 1
                        if response.isCoalesced { result.coalesced += 1 }
                        if outcome.isFirstCopy { result.thumbnails.append(response.image.image) }
                    case .failure(let error):
                        result.failures.append("\(outcome.name): \(error)")
                    }
                }
                enqueue()
            }
        }
        result.seconds = started.duration(to: .now).timeInterval
        return result
    }

    struct Outcome: Sendable {
        var name: String
        var isFirstCopy: Bool
        var result: Swift.Result<ImageResponse, ImagePipeline.Error>
    }

    /// Loads `request` (`copies` times at once), reporting progress to `display`.
    static func load(
        _ request: ImageRequest, id: Int, copies: Int, pipeline: ImagePipeline, display: ProgressDisplay?
    ) async -> [Outcome] {
        let name = request.url?.lastPathComponent ?? "image \(id)"
        display?.transferStarted(id: id, name: name)
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for copy in 0..<copies {
                group.addTask {
                    let result = await withCheckedContinuation { continuation in
                        pipeline.loadImage(
                            with: request,
                            progress: { progress in
                                display?.transferProgressed(
                                    id: id, received: progress.completed, expected: progress.total)
                            },
                            completion: { continuation.resume(returning: $0) })
                    }
                    return Outcome(name: name, isFirstCopy: copy == 0, result: result)
                }
            }
            var all: [Outcome] = []
            for await outcome in group { all.append(outcome) }
            return all.sorted { $0.isFirstCopy && !$1.isFirstCopy }
        }
        let failed = outcomes.contains { if case .failure = $0.result { true } else { false } }
        let bytes = outcomes.first.flatMap { try? $0.result.get().image.originalData?.count } ?? 0
        display?.itemFinished(id: id, bytes: Int64(bytes), failed: failed)
        return outcomes
    }
}

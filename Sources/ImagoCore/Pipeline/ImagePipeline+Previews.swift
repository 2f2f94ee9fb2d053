import Foundation

extension ImagePipeline {
    /// Decodes the bytes received so far as a progressive preview, when enough new bytes arrived since the last
    /// one and no preview decode is running (previews are skipped, never queued up).
    func decodePreview(_ data: Data, node: WorkNode<ImageOutput>, context: StageContext, request: ImageRequest) {
        let interval = configuration.previewInterval
        let shouldDecode = context.state.withLock { s -> Bool in
            let basis = Double(s.expectedBytes ?? 100_000)
            guard !s.isPreviewRunning, Double(data.count - s.lastPreviewBytes) >= basis * interval else { return false }
            if let expected = s.expectedBytes, data.count >= expected { return false }  // the final decode follows
            s.isPreviewRunning = true
            s.lastPreviewBytes = data.count
            return true
        }
        guard shouldDecode else { return }
        decodeQueue.enqueue(priority: graph.priority(of: node)) { [self] in
            defer { context.state.withLock { $0.isPreviewRunning = false } }
            guard !graph.isCancelled(node) else { return }
            let started = ContinuousClock.now
            guard case .success(var image) = decodeImage(data, request: request, partial: true) else { return }
            let elapsed = ContinuousClock.now - started
            counters.withLock {
                $0.decodeCount += 1
                $0.decodeTime += elapsed
            }
            emit(.decoded(source: request.sourceDescription, duration: elapsed, isPreview: true))
            image.isPreview = true
            graph.emit(node, .preview(image))
        }
    }

    /// Runs processor `n - 1` on a preview, unless the previous preview is still being processed.
    func processPreview(
        _ image: ImageContainer, node: WorkNode<ImageOutput>, context: StageContext, request: ImageRequest, _ n: Int
    ) {
        let shouldProcess = context.state.withLock { s -> Bool in
            guard !s.isPreviewRunning else { return false }
            s.isPreviewRunning = true
            return true
        }
        guard shouldProcess else { return }
        let processor = request.processors[n - 1]
        processQueue.enqueue(priority: graph.priority(of: node)) { [self] in
            defer { context.state.withLock { $0.isPreviewRunning = false } }
            guard !graph.isCancelled(node), var processed = try? image.mapFramesLazily({ try processor.process($0) })
            else { return }
            processed.isPreview = true
            graph.emit(node, .preview(processed))
        }
    }
}

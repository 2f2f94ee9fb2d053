import Foundation

extension ImagePipeline {
    /// Decodes the bytes received so far as a progressive preview, when enough new bytes arrived since the last
    /// one and no preview decode is running (previews are skipped, never queued up).
    func decodePreview(_ data: Data, node: WorkNode<ImageOutput>, context: StageContext, request: ImageRequest) {
        switch configuration.previewPolicy {
        case .disabled: return
        case .incremental: break
        case .progressiveOnly: guard Self.isProgressiveJPEG(data) else { return }
        }
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
            guard !graph.isCancelled(node),
                var processed = try? image.mapFramesLazily({
                    try processor.process($0, profile: image.colorProfile)
                })
            else { return }
            processed.isPreview = true
            graph.emit(node, .preview(processed))
        }
    }

    /// Whether `data` starts a progressive JPEG: its frame header (found by walking the marker segments) is
    /// SOF2, SOF6, SOF10 or SOF14. `false` for a baseline JPEG, another format, or data ending before the frame
    /// header.
    static func isProgressiveJPEG(_ data: Data) -> Bool {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return false }
            var i = 2
            while i + 3 < bytes.count {
                guard bytes[i] == 0xFF else { return false }
                let marker = bytes[i + 1]
                if marker == 0xFF {  // fill byte
                    i += 1
                    continue
                }
                if marker == 0x01 || (0xD0...0xD7).contains(marker) {  // no length
                    i += 2
                    continue
                }
                if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                    return [0xC2, 0xC6, 0xCA, 0xCE].contains(marker)
                }
                if marker == 0xDA || marker == 0xD9 { return false }  // a scan before any frame header
                i += 2 + (Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
            }
            return false
        }
    }
}

import Foundation

extension ImagePipeline {
    /// The encoded bytes of `request`'s source, without decoding them (Nuke's `data(for:)`): the disk cache, the
    /// shared tier, then the loader, with the same coalescing, failure cache, revalidation and disk writes as an
    /// image load. A load of the same source in flight for an image is joined, and the reverse. Bytes this call
    /// fetches are stored on disk as an unprocessed request's original (under every ``ImagePipeline/DataCachePolicy``, when a
    /// decoder knows their format), so a later image request decodes them without a download. The request's
    /// processors, target size and decoding options play no part.
    ///
    /// Use it to hand the original file on (a download, a share sheet, a proxy that passes some formats through)
    /// or to warm the disk cache. ``ImageRequest/Options/skipsLoading`` makes it a cache-only read.
    ///
    /// ```swift
    /// let original = try await pipeline.data(for: ImageRequest(url: url))
    /// try original.data.write(to: file)
    /// ```
    ///
    /// - Throws: ``Error`` (``Error/notCached(_:)`` for a cache-only read that missed, ``Error/cancelled`` when
    ///   the calling task is cancelled, ``Error/invalidated`` after ``invalidate()``; a load already running when
    ///   the pipeline is invalidated still finishes).
    public func data(for request: ImageRequest) async throws(Error) -> ImageDataResponse {
        guard !isInvalidated else { throw .invalidated }
        let started = ContinuousClock.now
        var request = request
        request.processors = []  // the original is what is loaded and stored, whatever the request processes
        let wait = Locked(DataWait())
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<ImageDataResponse, Error>, Never>) in
                let isCancelled = wait.withLock { wait -> Bool in
                    wait.continuation = continuation
                    return wait.isCancelled
                }
                guard !isCancelled else { return DataWait.finish(wait, .failure(.cancelled)) }
                let joined = Locked(false)
                let (work, didJoin) = subscribeData(request, priority: request.priority) { [self] event in
                    switch event {
                    case .value(let output):
                        var metrics = output.metrics
                        metrics.total = .now - started
                        let response = ImageDataResponse(
                            data: output.data, format: configuration.decoders.format(of: output.data),
                            source: output.source, metadata: output.metadata, isCoalesced: joined.value,
                            isStale: output.revalidation != nil, metrics: metrics)
                        DataWait.finish(wait, .success(response))
                    case .failure(let error): DataWait.finish(wait, .failure(error))
                    case .progress, .partialData, .preview: break
                    }
                }
                if didJoin {
                    joined.withLock { $0 = true }
                    noteJoin(.load, request)
                }
                // Cancelled while subscribing: leave the work (the cancellation handler found no subscription).
                let leaves = wait.withLock { wait -> Bool in
                    wait.work = work
                    return wait.isCancelled
                }
                if leaves {
                    work.unsubscribe()
                    DataWait.finish(wait, .failure(.cancelled))
                }
            }
        } onCancel: {
            let work = wait.withLock { wait -> WorkSubscription? in
                wait.isCancelled = true
                return wait.work
            }
            work?.unsubscribe()
            DataWait.finish(wait, .failure(.cancelled))
        }
        return try result.get()
    }
}

/// A ``ImagePipeline/data(for:)`` call's wait: its continuation, resumed once by whichever comes first (the load's
/// result or the caller's cancellation), and its subscription to the load.
private struct DataWait: Sendable {
    var continuation: CheckedContinuation<Result<ImageDataResponse, ImagePipeline.Error>, Never>?
    var work: WorkSubscription?
    var isCancelled = false

    /// Resumes the wait in `state` with `result` unless it was resumed already (outside the lock).
    static func finish(_ state: Locked<DataWait>, _ result: Result<ImageDataResponse, ImagePipeline.Error>) {
        let continuation = state.withLock { wait in
            defer { wait.continuation = nil }
            return wait.continuation
        }
        continuation?.resume(returning: result)
    }
}

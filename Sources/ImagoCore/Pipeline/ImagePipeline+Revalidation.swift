import Foundation

/// One background revalidation of a stale disk entry, shared by every request that delivered it.
final class Revalidation: Sendable {
    enum Outcome: Sendable, Hashable {
        /// 304 (or the same bytes): only the metadata was refreshed.
        case notModified
        /// New bytes are in the disk cache and the memory variants were dropped.
        case updated
        /// The conditional request failed; the stale entry stays.
        case failed
    }

    private let state = Locked<(outcome: Outcome?, listeners: [@Sendable (Outcome) -> Void])>((nil, []))

    /// Calls `listener` with the outcome (at once if already known).
    func onComplete(_ listener: @escaping @Sendable (Outcome) -> Void) {
        let outcome = state.withLock { s -> Outcome? in
            if let outcome = s.outcome { return outcome }
            s.listeners.append(listener)
            return nil
        }
        if let outcome { listener(outcome) }
    }

    func complete(_ outcome: Outcome) {
        let listeners = state.withLock { s -> [@Sendable (Outcome) -> Void] in
            guard s.outcome == nil else { return [] }
            s.outcome = outcome
            defer { s.listeners = [] }
            return s.listeners
        }
        for listener in listeners { listener(outcome) }
    }
}

extension ImagePipeline {
    /// Starts (or joins) the revalidation of `entry`, stored for `request`'s source, with a conditional request.
    func revalidate(_ request: ImageRequest, url: URL, entry: DataCacheEntry) -> Revalidation {
        let key = request.sourceKey
        let (revalidation, isNew) = revalidations.withLock { all -> (Revalidation, Bool) in
            if let existing = all[key] { return (existing, false) }
            let revalidation = Revalidation()
            all[key] = revalidation
            return (revalidation, true)
        }
        guard isNew else { return revalidation }
        counters.withLock { $0.networkLoads += 1 }
        let validators = entry.metadata.validators
        let dataRequest = DataRequest(
            url: url, headers: request.headers, priority: .low, validators: validators.isEmpty ? nil : validators)
        _ = configuration.dataLoader.load(dataRequest) { [self] event in
            let outcome: Revalidation.Outcome
            switch event {
            case .progress, .partialData: return
            case .failed: outcome = .failed
            case .finished(let response):
                counters.withLock { $0.networkBytes += Int64(response.data.count) }
                outcome = applyRevalidation(response, entry: entry, request: request)
            }
            _ = revalidations.withLock { $0.removeValue(forKey: key) }
            counters.withLock {
                if outcome == .notModified { $0.revalidationsNotModified += 1 }
                if outcome == .updated { $0.revalidationsUpdated += 1 }
            }
            if outcome != .failed {
                emit(.revalidated(source: request.sourceDescription, notModified: outcome == .notModified))
            }
            revalidation.complete(outcome)
        }
        return revalidation
    }

    private func applyRevalidation(
        _ response: DataResponse, entry: DataCacheEntry, request: ImageRequest
    ) -> Revalidation.Outcome {
        let key = request.sourceKey
        let dataCache = configuration.dataCache
        if response.isNotModified || response.data == entry.data {
            var metadata = makeMetadata(from: response) ?? DataCacheMetadata()
            if metadata.validators.isEmpty { metadata.validators = entry.metadata.validators }
            if metadata.contentType == nil { metadata.contentType = entry.metadata.contentType }
            dataCache?.updateMetadata(metadata, for: key)
            return .notModified
        }
        // New content: replace the bytes first (synchronously, so that updates decode the new ones), then drop
        // every decoded and processed variant.
        if let metadata = makeMetadata(from: response) {
            dataCache?.store(response.data, for: key, metadata: metadata)
        } else {
            dataCache?.removeData(for: key)
        }
        configuration.imageCache?.removeImages { $0.source == key }
        for processed in takeProcessedKeys(of: key) { dataCache?.removeData(for: processed.dataCacheKey) }
        return .updated
    }
}

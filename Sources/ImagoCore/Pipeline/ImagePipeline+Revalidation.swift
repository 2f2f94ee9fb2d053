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
        /// The origin answered 404 or 410: the source is gone, and the entry and every variant of it were removed.
        case gone(DataLoadingError)
        /// The origin refused with another 4xx that retrying does not change (401, 403, 451 …): the entry stays,
        /// since the refusal may depend on the request's credentials, but it is not delivered in its stead.
        case refused(DataLoadingError)
    }

    /// A listener: the outcome, and the bytes to deliver now (the entry with its renewed metadata, or the new
    /// bytes; `nil` when the request failed or the source is gone).
    typealias Listener = @Sendable (Outcome, DataOutput?) -> Void

    private let state = Locked<(outcome: Outcome?, current: DataOutput?, listeners: [Listener])>((nil, nil, []))

    /// Calls `listener` with the outcome (at once if already known).
    func onComplete(_ listener: @escaping Listener) {
        let known = state.withLock { s -> (Outcome, DataOutput?)? in
            if let outcome = s.outcome { return (outcome, s.current) }
            s.listeners.append(listener)
            return nil
        }
        if let (outcome, current) = known { listener(outcome, current) }
    }

    func complete(_ outcome: Outcome, current: DataOutput?) {
        let listeners = state.withLock { s -> [Listener] in
            guard s.outcome == nil else { return [] }
            s.outcome = outcome
            s.current = current
            defer { s.listeners = [] }
            return s.listeners
        }
        for listener in listeners { listener(outcome, current) }
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
            let (outcome, current): (Revalidation.Outcome, DataOutput?)
            switch event {
            case .progress, .partialData: return
            case .failed(let error):
                switch error {
                case .statusCode(404, _), .statusCode(410, _):
                    removeAll(for: request)
                    (outcome, current) = (.gone(error), nil)
                case .statusCode(let code, _) where (400..<500).contains(code) && !error.isTransient:
                    (outcome, current) = (.refused(error), nil)
                default: (outcome, current) = (.failed, nil)
                }
            case .finished(let response):
                counters.withLock { $0.networkBytes += Int64(response.data.count) }
                (outcome, current) = applyRevalidation(response, entry: entry, request: request)
            }
            _ = revalidations.withLock { $0.removeValue(forKey: key) }
            counters.withLock {
                if outcome == .notModified { $0.revalidationsNotModified += 1 }
                if outcome == .updated { $0.revalidationsUpdated += 1 }
            }
            if outcome == .notModified || outcome == .updated {
                emit(.revalidated(source: request.sourceDescription, notModified: outcome == .notModified))
            }
            revalidation.complete(outcome, current: current)
        }
        return revalidation
    }

    /// Applies a revalidation's `response` to the caches: the outcome, and the bytes now current with what to store
    /// beside them.
    private func applyRevalidation(
        _ response: DataResponse, entry: DataCacheEntry, request: ImageRequest
    ) -> (Revalidation.Outcome, DataOutput) {
        let key = request.sourceKey
        let dataCache = configuration.dataCache
        if response.isNotModified || response.data == entry.data {
            var metadata = makeMetadata(from: response) ?? DataCacheMetadata()
            if metadata.validators.isEmpty { metadata.validators = entry.metadata.validators }
            if metadata.contentType == nil { metadata.contentType = entry.metadata.contentType }
            dataCache?.updateMetadata(metadata, for: key)
            return (.notModified, DataOutput(data: entry.data, source: .disk, metadata: metadata))
        }
        // New content: replace the bytes first (synchronously, so that updates decode the new ones), then drop
        // every decoded and processed variant.
        let metadata = makeMetadata(from: response)
        if let metadata {
            dataCache?.store(response.data, for: key, metadata: metadata)
        } else {
            dataCache?.removeData(for: key)
        }
        configuration.imageCache?.removeImages { $0.source == key }
        for processed in takeProcessedKeys(of: key) { dataCache?.removeData(for: processed.dataCacheKey) }
        return (.updated, DataOutput(data: response.data, source: .network, metadata: metadata))
    }
}

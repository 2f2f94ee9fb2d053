import Foundation

/// The first bytes of an interrupted response, kept so that the next attempt asks only for the rest (`Range` with
/// `If-Range`).
package struct PartialBody: Sendable {
    /// The bytes received.
    package let data: Data
    /// The `If-Range` validator: the strong `ETag`, else `Last-Modified`.
    package let validator: String
    /// The whole body's length.
    package let total: Int64

    package init(data: Data, validator: String, total: Int64) {
        self.data = data
        self.validator = validator
        self.total = total
    }
}

/// Where a loader keeps interrupted bodies: in memory (``MemoryResumeStore``, a loader's own) or in a disk cache's
/// staging area (``DiskCache/resumeStore``, shared by every loader of a pipeline using that cache).
package protocol ResumeStoring: Sendable {
    /// Keeps `partial` for `key`, replacing what was kept for it, evicting the oldest until all fits in `limit`
    /// bytes; a partial larger than `limit` is not kept.
    func keep(_ partial: PartialBody, for key: LoadCoordinator.TransferKey, limit: Int)

    /// Removes and returns the bytes kept for `key`.
    func take(_ key: LoadCoordinator.TransferKey) -> PartialBody?
}

/// A loader that can be told to keep its interrupted bodies in a pipeline's disk cache (see
/// ``ImagePipeline/init(configuration:)``).
package protocol ResumeStoreAdopting {
    /// Keeps interrupted bodies in `store` from now on (what the previous store holds stays there).
    func adoptResumeStore(_ store: any ResumeStoring)
}

/// Interrupted bodies in memory, oldest evicted first.
package final class MemoryResumeStore: ResumeStoring {
    private struct State {
        var partials: [LoadCoordinator.TransferKey: PartialBody] = [:]
        var order: [LoadCoordinator.TransferKey] = []
        var bytes = 0

        mutating func take(_ key: LoadCoordinator.TransferKey) -> PartialBody? {
            guard let partial = partials.removeValue(forKey: key) else { return nil }
            order.removeAll { $0 == key }
            bytes -= partial.data.count
            return partial
        }
    }

    private let state = Locked(State())

    package init() {}

    package func keep(_ partial: PartialBody, for key: LoadCoordinator.TransferKey, limit: Int) {
        state.withLock { s in
            _ = s.take(key)
            guard partial.data.count <= limit else { return }
            while s.bytes + partial.data.count > limit, let oldest = s.order.first { _ = s.take(oldest) }
            s.partials[key] = partial
            s.order.append(key)
            s.bytes += partial.data.count
        }
    }

    package func take(_ key: LoadCoordinator.TransferKey) -> PartialBody? {
        state.withLock { $0.take(key) }
    }

    /// The bytes kept.
    package var byteCount: Int { state.withLock { $0.bytes } }
}

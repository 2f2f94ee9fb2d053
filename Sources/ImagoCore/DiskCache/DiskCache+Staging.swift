import Foundation

// Staged writes and lazily persisted reads: `store` and `removeData` record the change in memory (visible to
// reads at once) and queue it for the serial writer queue; reads record their access in memory and append it to
// the shared journal at most `accessPersistenceDelay` later (or at once after 4,096 of them).

extension DiskCache {
    func stage(key: String, data: Data?, metadata: DataCacheMetadata) {
        let digest = self.digest(for: key)
        let admitted = state.withLock { state -> (sequence: UInt64, overLimit: Bool)? in
            guard !state.isClosed else { return nil }
            state.sequence += 1
            if let old = state.staged[digest] { state.stagedBytes -= old.data?.count ?? 0 }
            state.staged[digest] = Staged(key: key, data: data, metadata: metadata, sequence: state.sequence)
            state.stagedBytes += data?.count ?? 0
            return (state.sequence, state.stagedBytes > configuration.maxStagedBytes)
        }
        guard let admitted else {
            configuration.onError?(.closed)
            return
        }
        configuration.afterStaging?()
        if admitted.overLimit {
            onQueue { writeStaged(digest, admitted.sequence) }
        } else {
            queue.async { self.writeStaged(digest, admitted.sequence) }
        }
    }

    /// Writes (or removes) the staged item for `digest` if it is still the one staged as `sequence`.
    func writeStaged(_ digest: SHA256Digest, _ sequence: UInt64) {
        guard let item = state.withLock({ $0.staged[digest] }), item.sequence == sequence else { return }
        var outbox = Outbox()
        do {
            if let data = item.data {
                try writeEntry(key: item.key, digest: digest, data: data, metadata: item.metadata, &outbox)
            } else {
                try removeEntry(digest, &outbox)
            }
        } catch let error as Error {
            state.withLock { $0.writeErrors += 1 }
            outbox.errors.append(error)
        } catch {}
        state.withLock { state in
            if let staged = state.staged[digest], staged.sequence == sequence {
                state.staged[digest] = nil
                state.stagedBytes -= staged.data?.count ?? 0
            }
        }
        deliver(outbox)
    }

    /// Writes every item staged so far, oldest first; runs on the writer queue. A store is visible to readers once
    /// it is staged, before its write is queued: another thread that sees it and then flushes would otherwise find
    /// the queue without it. The queued write finds the item gone and does nothing.
    func writeStagedSoFar() {
        let items = state.withLock { state in
            state.staged.map { (digest: $0.key, sequence: $0.value.sequence) }.sorted { $0.sequence < $1.sequence }
        }
        for item in items { writeStaged(item.digest, item.sequence) }
    }

    /// Runs `body` on the writer queue, after everything queued before it (inline when already on it).
    func onQueue<R>(_ body: () throws -> R) rethrows -> R {
        if DispatchQueue.getSpecific(key: queueKey) == true { return try body() }
        return try queue.sync { try body() }
    }

    /// Records a read of `digest` at `now` in the index (sealing the version read when `seal` is not 0), and
    /// queues the same touch record for the journal, appended lazily.
    func recordHit(_ digest: SHA256Digest, at now: Double, seal: UInt64 = 0) {
        enum Persist { case later, now, none }
        let persist = state.withLock { state -> Persist in
            state.hits += 1
            let record = DiskCacheJournal.Record.touch(digest, at: now, seal: seal)
            DiskCacheJournal.apply(record, to: &state.index)
            state.pending.append(record)
            guard !state.isClosed else { return .none }
            // Bounded memory: a burst of reads is appended at once rather than after the delay.
            if state.pending.count == Self.maxPendingRecords { return .now }
            guard !state.isPersistScheduled else { return .none }
            state.isPersistScheduled = true
            return .later
        }
        switch persist {
        case .later:
            let delay = configuration.accessPersistenceDelay.timeInterval
            queue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.persistPending() }
        case .now:
            queue.async { [weak self] in self?.persistPending() }
        case .none:
            break
        }
    }

    /// Appends recorded reads to the journal (and replays what other processes appended).
    func persistPending() {
        let needed = state.withLock { state -> Bool in
            state.isPersistScheduled = false
            return !state.isClosed
        }
        guard needed else { return }
        var outbox = Outbox()
        do { try exclusive(&outbox) { _, _ in } } catch let error as Error { outbox.errors.append(error) } catch {}
        deliver(outbox)
    }

    /// Errors and log lines collected under a lock, delivered after it is released.
    struct Outbox {
        var errors: [Error] = []
        var logs: [String] = []
    }

    func deliver(_ outbox: Outbox) {
        for line in outbox.logs { configuration.log?(line) }
        for error in outbox.errors { configuration.onError?(error) }
    }
}

import Foundation

/// Interrupted download bodies kept as files in a ``DiskCache``'s staging area (`tmp/`), so that the next attempt
/// for the same request — from any loader of this process using the cache — asks only for the rest.
///
/// Bounded: at most the `limit` each `keep` passes (the loader's `resumableBytesLimit`), oldest removed first. The
/// files are named after the cache's process token, so a later process opening the cache removes those of a
/// process that ended (as it does for its other temporary files), and this store removes its own when released.
/// The index (validator, length, order) lives in memory: bytes are resumed within one process.
package final class DiskResumeStore: ResumeStoring {
    private struct Entry {
        let path: String
        let validator: String
        let total: Int64
        let size: Int
    }

    private struct State {
        var entries: [LoadCoordinator.TransferKey: Entry] = [:]
        var order: [LoadCoordinator.TransferKey] = []
        var bytes = 0

        mutating func remove(_ key: LoadCoordinator.TransferKey) -> Entry? {
            guard let entry = entries.removeValue(forKey: key) else { return nil }
            order.removeAll { $0 == key }
            bytes -= entry.size
            return entry
        }
    }

    private let directory: String
    private let token: String
    private let state = Locked(State())

    /// A store writing into `directory` (the cache's `tmp/`), its files named after `token`.
    init(directory: String, token: String) {
        self.directory = directory
        self.token = token
    }

    deinit {
        for entry in state.withLock({ $0.entries.values }) { unlink(entry.path) }
    }

    /// The file a key's bytes go to.
    private func path(for key: LoadCoordinator.TransferKey) -> String {
        "\(directory)/\(token).resume.\(SHA256.hash(key.stableDescription).hex).part"
    }

    package func keep(_ partial: PartialBody, for key: LoadCoordinator.TransferKey, limit: Int) {
        let path = path(for: key)
        // The file is written outside the lock; the index changes under it.
        var evicted = state.withLock { s -> [Entry] in s.remove(key).map { [$0] } ?? [] }
        for entry in evicted { unlink(entry.path) }
        guard partial.data.count <= limit, !partial.data.isEmpty else { return }
        unlink(path + ".tmp")
        let code = partial.data.withUnsafeBytes {
            DiskCacheDirectory.writeNewFile(path: path + ".tmp", parts: [$0], sync: false)
        }
        guard code == 0, rename(path + ".tmp", path) == 0 else {
            unlink(path + ".tmp")
            return
        }
        let entry = Entry(path: path, validator: partial.validator, total: partial.total, size: partial.data.count)
        evicted = state.withLock { s -> [Entry] in
            var out: [Entry] = []
            if let previous = s.remove(key), previous.path != path { out.append(previous) }
            while s.bytes + entry.size > limit, let oldest = s.order.first, let removed = s.remove(oldest) {
                out.append(removed)
            }
            s.entries[key] = entry
            s.order.append(key)
            s.bytes += entry.size
            return out
        }
        for entry in evicted where entry.path != path { unlink(entry.path) }
    }

    package func take(_ key: LoadCoordinator.TransferKey) -> PartialBody? {
        guard let entry = state.withLock({ $0.remove(key) }) else { return nil }
        defer { unlink(entry.path) }
        guard case .success(let bytes) = DiskCacheDirectory.readFile(path: entry.path), bytes.count == entry.size
        else { return nil }
        return PartialBody(data: Data(bytes), validator: entry.validator, total: entry.total)
    }

    /// The bytes kept (files in the staging area).
    package var byteCount: Int { state.withLock { $0.bytes } }
}

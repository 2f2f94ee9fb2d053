import Foundation

extension ImagePipeline {
    /// Whether ``invalidate()`` was called.
    public var isInvalidated: Bool { runningTasks.isClosed }

    /// Shuts the pipeline down (Nuke's `invalidate()`), for a server or tool that stops: every task in flight
    /// ends with ``Error/cancelled`` (delivered to callbacks and async callers alike), every later load fails at
    /// once with ``Error/invalidated``, and the caches are flushed: pending writes handed over, a ``DiskCache``
    /// flushed and closed. Idempotent; returns when the disk cache is closed.
    ///
    /// ```swift
    /// await pipeline.invalidate()   // on SIGTERM, before exiting
    /// ```
    public func invalidate() async {
        for task in runningTasks.close() { task.finishCancelled() }
        await flushCaches()
        guard let diskCache = configuration.dataCache as? DiskCache else { return }
        // close() compacts the journal into the snapshot: disk work, on the queue for it.
        await WorkQueue.blocking.value(priority: .normal) { diskCache.close() }
    }

    /// Waits for every pending cache write (``waitForPendingCacheWrites()``), then puts a ``DiskCache``'s staged
    /// writes on disk (``DiskCache/flush()``): one call before a program reads the cache directory or exits.
    public func flushCaches() async {
        await waitForPendingCacheWrites()
        await DiskCache.flush(configuration.dataCache)
    }
}

/// A shared tier's counters since it was made and its nodes' circuit breakers now (see
/// ``SharedDataCaching/metrics``), as `imago serve` exports them at `/metrics`.
public struct SharedCacheMetrics: Sendable, Hashable {
    /// Reads that found a valid value. Default 0.
    public var hits = 0
    /// Reads that found nothing usable (absent, oversized or invalid). Default 0.
    public var misses = 0
    /// Values written. Default 0.
    public var writes = 0
    /// Values not stored, or read as misses, for being over the tier's largest value (Redis:
    /// `RedisCache.Configuration.maximumValueSize`). Default 0.
    public var oversizedSkips = 0
    /// Values found corrupt or holding another key, read as misses and deleted. Default 0.
    public var invalidRemoved = 0
    /// Calls that timed out. Default 0.
    public var timeouts = 0
    /// Calls that failed otherwise: refused connections, resets, error replies. Default 0.
    public var failures = 0
    /// Calls not made because a node's circuit breaker was open. Default 0.
    public var skippedWhileOpen = 0
    /// Fetch leases taken: this process fetched from the origin for the fleet. Default 0.
    public var leasesTaken = 0
    /// Waits for another process's fetch that ended with its value (no origin fetch here). Default 0.
    public var leaseWaitsFilled = 0
    /// Waits that ended without a value, then fetched (lease expired or released after a failure, or the wait
    /// limit). Default 0.
    public var leaseWaitsUnfilled = 0
    /// Origin fetches made without a lease because the tier could not be asked (down, breaker open). Default 0.
    public var unleasedFetches = 0
    /// How many times a node's circuit breaker opened. Default 0.
    public var breakerOpens = 0
    /// Every node of the tier and whether its breaker is open now. Default empty.
    public var nodes: [Node] = []
    /// How many of ``nodes`` have their breaker open now.
    public var openNodes: Int { nodes.filter(\.isBreakerOpen).count }

    /// One node of the tier.
    public struct Node: Sendable, Hashable {
        /// How the node is named in metrics (its address, never its password).
        public var name: String
        /// Whether its circuit breaker is open (calls skipped until a probe succeeds).
        public var isBreakerOpen: Bool

        /// A node's state.
        public init(name: String, isBreakerOpen: Bool) {
            self.name = name
            self.isBreakerOpen = isBreakerOpen
        }
    }

    /// Zeroed counters and no nodes.
    public init() {}
}

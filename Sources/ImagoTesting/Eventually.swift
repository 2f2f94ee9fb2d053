extension ImagoTesting {
    /// How long ``eventually(timeout:_:)`` waits by default: 10 s, far beyond any wait that succeeds, so that only
    /// a broken test ever reaches it.
    public static let defaultTimeout: Duration = .seconds(10)

    /// Polls `condition` about every millisecond until it holds or `timeout` (``defaultTimeout`` by default)
    /// passes; returns whether it held. The one polling helper of the tests: the replacement for sleeping.
    ///
    /// ```swift
    /// #expect(await ImagoTesting.eventually { cache.count == 0 })
    /// ```
    @discardableResult
    public static func eventually(timeout: Duration = defaultTimeout, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if condition() { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

extension ImagoTesting {
    /// Polls `condition` about every millisecond until it holds or `timeout` (10 s by default) passes; returns
    /// whether it held. The test-friendly replacement for sleeping.
    ///
    /// ```swift
    /// #expect(await ImagoTesting.eventually { cache.count == 0 })
    /// ```
    @discardableResult
    public static func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if condition() { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

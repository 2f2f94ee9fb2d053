extension Duration {
    /// The duration in seconds, with its fraction (a `TimeInterval`): the one conversion from `Duration` to
    /// seconds in the package.
    package var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Whole milliseconds, rounded down (for C APIs that take milliseconds).
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

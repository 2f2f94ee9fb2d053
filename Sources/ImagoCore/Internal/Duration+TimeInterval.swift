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

    /// The duration as a person reads it in a message: whole seconds (`10 s`) or, below a second or with a
    /// fraction, whole milliseconds (`300 ms`).
    package var readableText: String {
        let milliseconds = milliseconds
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}

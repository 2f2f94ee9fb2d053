extension Duration {
    /// The duration in seconds, with its fraction (a `TimeInterval`): the one conversion from `Duration` to
    /// seconds in the package.
    package var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension ImagoTesting {
    /// SplitMix64: a fixed, platform-independent random sequence, so a test that draws random inputs can be
    /// replayed. Tests use it instead of the system generator.
    ///
    /// ```swift
    /// var random = ImagoTesting.SeededGenerator(seed: 42)
    /// let index = Int.random(in: 0..<10, using: &random)
    /// ```
    public struct SeededGenerator: RandomNumberGenerator, Sendable {
        /// The generator's whole state; the next value is derived from it.
        public var state: UInt64

        /// A generator starting from `state` exactly.
        public init(state: UInt64) { self.state = state }

        /// A generator whose start is `seed` spread over all 64 bits (so that small seeds differ widely).
        public init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }

        /// The next 64 random bits.
        public mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        /// A value in `0..<bound` (by remainder: a slight bias that tests do not mind).
        public mutating func next(below bound: Int) -> Int {
            Int(next() % UInt64(bound))
        }
    }
}

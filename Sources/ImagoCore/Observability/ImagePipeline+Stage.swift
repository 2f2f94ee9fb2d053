extension ImagePipeline {
    /// A stage of shared work a request can join (``Event/coalesced(stage:source:)``).
    public enum Stage: Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Loading the encoded bytes.
        case load
        /// Decoding them.
        case decode
        /// Running a processor.
        case process

        /// `load`, `decode` or `process`.
        public var description: String {
            switch self {
            case .load: "load"
            case .decode: "decode"
            case .process: "process"
            }
        }
    }
}

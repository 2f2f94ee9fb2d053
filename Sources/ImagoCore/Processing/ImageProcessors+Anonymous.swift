extension ImageProcessors {
    /// A one-off processor from a closure, identified by a string the caller chooses.
    ///
    /// The identifier goes into cache keys as given: it must change whenever what the closure does changes
    /// (include every parameter), and must not collide with another processor's. The closure may run
    /// concurrently on any thread.
    public struct Anonymous: ImageProcessing {
        /// The caller's identifier, used as is.
        public let identifier: String
        private let closure: @Sendable (PixelBuffer) throws -> PixelBuffer

        /// A processor named `id` that runs `closure`.
        public init(id: String, _ closure: @escaping @Sendable (PixelBuffer) throws -> PixelBuffer) {
            self.identifier = id
            self.closure = closure
        }

        /// What the closure returns (its errors pass through).
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            try closure(image)
        }
    }
}

extension ImageProcessing where Self == ImageProcessors.Anonymous {
    /// A processor named `id` that runs `closure`; `id` must capture every parameter the closure uses.
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, processors: [.anonymous(id: "app.invert") { try invert($0) }])
    /// ```
    public static func anonymous(
        id: String, _ closure: @escaping @Sendable (PixelBuffer) throws -> PixelBuffer
    ) -> Self {
        ImageProcessors.Anonymous(id: id, closure)
    }
}

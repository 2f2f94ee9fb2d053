extension ImageProcessors {
    /// Several processors applied in order, as one.
    ///
    /// Its identifier joins the members' identifiers with `|` in order, so the same processors in the same order
    /// give the same key whether passed as a composition or one by one. An empty composition returns the image
    /// unchanged and is identified as `imago.identity`.
    public struct Composition: ImageProcessing {
        /// The members, first applied first.
        public var processors: [any ImageProcessing]

        /// A composition of `processors`, applied first to last.
        public init(_ processors: [any ImageProcessing]) {
            self.processors = processors
        }

        /// The members' identifiers joined by `|`, or `imago.identity` when empty.
        public var identifier: String { ImageProcessors.identifier(of: processors) }

        /// The image after every member; stops at the first error and rethrows it.
        public func process(_ image: PixelBuffer) throws -> PixelBuffer {
            try processors.reduce(image) { try $1.process($0) }
        }

        /// The image after every member, each told `profile`; stops at the first error and rethrows it.
        public func process(_ image: PixelBuffer, profile: ColorProfile?) throws -> PixelBuffer {
            try processors.reduce(image) { try $1.process($0, profile: profile) }
        }

        /// The first member's decode target (`nil` when empty).
        public var decodeTarget: DecodeTarget? { processors.first?.decodeTarget }
    }

    /// The identifier of `processors` applied in order (`|`-joined, `imago.identity` when empty); what a
    /// ``Composition`` reports, for callers that keep processors as an array.
    public static func identifier(of processors: [any ImageProcessing]) -> String {
        processors.isEmpty ? "imago.identity" : processors.map(\.identifier).joined(separator: "|")
    }
}

extension ImageProcessing where Self == ImageProcessors.Composition {
    /// Applies `processors` in order, as one processor.
    ///
    /// ```swift
    /// let thumbnail: ImageProcessors.Composition = .composition([.resize(width: 64, height: 64), .circle()])
    /// ```
    public static func composition(_ processors: [any ImageProcessing]) -> Self {
        ImageProcessors.Composition(processors)
    }
}

extension FailureCache {
    /// What a failure is remembered under: a source and, for a URL with credentials, a digest of them, so that a
    /// load refused for wrong credentials never fails a request made with the right ones.
    ///
    /// The pipeline makes one per request (``ImageRequest/sourceKey`` and the SHA-256 of the URL's user-info); a
    /// string literal is a key without credentials.
    public struct Key: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The source's key (``ImageRequest/sourceKey``).
        public var source: String
        /// The hex SHA-256 of the URL's user-info, or `nil` when it has none. Default `nil`.
        public var credentialDigest: String?

        /// A key for `source` loaded with the credentials whose digest is `credentialDigest` (default none).
        public init(source: String, credentialDigest: String? = nil) {
            self.source = source
            self.credentialDigest = credentialDigest
        }

        /// A key for the source `value`, without credentials.
        public init(stringLiteral value: String) {
            self.init(source: value)
        }

        /// The source (the digest is left out).
        public var description: String { source }
    }
}

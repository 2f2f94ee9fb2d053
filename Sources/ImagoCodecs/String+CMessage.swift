extension String {
    /// The text a C library wrote into `buffer` (a message, a description), up to its first NUL, read as UTF-8
    /// with invalid bytes replaced: what every C call here that fills a caller's `char` buffer needs turned back.
    init(nulTerminated buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

import Foundation

/// Loads `data:` URLs (RFC 2397): `data:[<media type>][;base64],<data>`, base64 or percent-encoded.
///
/// The response has status 200, the media type as `content-type` (default `text/plain;charset=US-ASCII`, as the
/// RFC says) and the decoded bytes. A malformed URL fails with ``DataLoadingError/unreadable(url:reason:)``.
/// Results are delivered on a global queue, never inside `load`. Thread-safe.
///
/// ```swift
/// let loader = DataURLLoader()
/// let response = try await loader.data(for: DataRequest(url: URL(string: "data:image/gif;base64,R0lGOD…")!))
/// ```
public struct DataURLLoader: DataLoading {
    /// The largest decoded body accepted; larger fails with `.bodyTooLarge`. Default 64 MiB.
    public var maximumBodySize: Int64

    /// A loader accepting bodies up to `maximumBodySize` bytes (default 64 MiB).
    public init(maximumBodySize: Int64 = 64 << 20) {
        self.maximumBodySize = maximumBodySize
    }

    /// Decodes the URL off the caller's thread and delivers `.finished` or `.failed`.
    public func load(_ request: DataRequest, handler: @escaping @Sendable (DataLoadEvent) -> Void)
        -> any DataLoadTask
    {
        let limit = maximumBodySize
        return OneShotLoadTask(handler: handler) {
            Self.decode(request.url).flatMap { response in
                Int64(response.data.count) > limit
                    ? .failure(.bodyTooLarge(url: request.url, limit: limit)) : .success(response)
            }
        }
    }

    /// Parses and decodes a `data:` URL.
    public static func decode(_ url: URL) -> Result<DataResponse, DataLoadingError> {
        let text = url.absoluteString
        guard text.count >= 5, text.prefix(5).lowercased() == "data:" else {
            return .failure(.unsupportedScheme(url: url))
        }
        let rest = text.dropFirst(5)
        guard let comma = rest.firstIndex(of: ",") else {
            return .failure(.unreadable(url: url, reason: "a data URL needs a comma before its data"))
        }
        var parameters = rest[..<comma].split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        let isBase64 = parameters.last?.lowercased() == "base64"
        if isBase64 { parameters.removeLast() }
        var mediaType = parameters.joined(separator: ";").removingPercentEncoding ?? ""
        if mediaType.isEmpty || mediaType.hasPrefix(";") { mediaType = "text/plain" + mediaType }
        if mediaType == "text/plain" { mediaType = "text/plain;charset=US-ASCII" }
        let payload = String(rest[rest.index(after: comma)...])
        let data: Data
        if isBase64 {
            // Percent-escapes and whitespace may appear inside the base64 text; the padding may be missing.
            var base64 = (payload.removingPercentEncoding ?? payload).filter { !$0.isWhitespace }
            base64 = base64.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64.append("=") }
            guard let decoded = Data(base64Encoded: base64) else {
                return .failure(.unreadable(url: url, reason: "the base64 data is malformed"))
            }
            data = decoded
        } else {
            guard let decoded = Self.percentDecodedBytes(payload) else {
                return .failure(.unreadable(url: url, reason: "the percent-encoded data is malformed"))
            }
            data = decoded
        }
        return .success(DataResponse(data: data, url: url, statusCode: 200, headers: ["Content-Type": mediaType]))
    }

    /// Percent-decodes to raw bytes (unlike `removingPercentEncoding`, the result need not be UTF-8).
    static func percentDecodedBytes(_ text: String) -> Data? {
        var out = Data()
        let bytes = Array(text.utf8)
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) else {
                    return nil
                }
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

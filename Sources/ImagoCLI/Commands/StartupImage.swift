import Foundation
import Imago

/// An image `imago serve` is given when it starts (the watermark, the fallback image), in one of imgproxy's three
/// forms: a file (`--NAME FILE`, imgproxy's `_PATH`), base64 bytes (`--NAME-data BASE64`, `_DATA`), or a URL
/// fetched once at start through the proxy's own source loader, with its address policy, timeouts and byte limit
/// (`--NAME-url URL`, `_URL`).
enum StartupImage: Sendable, Equatable {
    /// The bytes, read from the file or decoded from base64.
    case bytes(Data)
    /// A URL still to fetch (``load(with:option:)``).
    case url(URL)

    /// The form given for `option` (e.g. `--watermark`, with `--watermark-data` and `--watermark-url`), or `nil`
    /// when none is.
    ///
    /// - Throws: ``UsageError`` for more than one form, an unreadable or oversized file, text that is not base64,
    ///   or a URL that is not http or https.
    static func parse(_ args: ParsedArguments, option: String) throws -> StartupImage? {
        let given = [option, option + "-data", option + "-url"].filter { args.value($0) != nil }
        guard given.count <= 1 else {
            throw UsageError("options '\(given.joined(separator: "', '"))' each give the image: pass one")
        }
        if let path = args.value(option) {
            // ImagoCore's file reader: a regular file, its size checked against 64 MiB before it is read.
            switch FileDataLoader().read(URL(fileURLWithPath: path)) {
            case .success(let response): return .bytes(response.data)
            case .failure(let error): throw UsageError("option '\(option)': cannot use '\(path)': \(error)")
            }
        }
        if let text = args.value(option + "-data") {
            guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters), !data.isEmpty else {
                throw UsageError("option '\(option)-data' expects the image's bytes in base64")
            }
            return .bytes(data)
        }
        if let text = args.value(option + "-url") {
            guard let url = FetchRun.parseHTTPURL(text) else {
                throw UsageError("option '\(option)-url' expects an http or https URL (got '\(text)')")
            }
            return .url(url)
        }
        return nil
    }

    /// The image's bytes: as given, or fetched with `loader`.
    ///
    /// - Throws: ``UsageError`` naming `option` when the fetch fails.
    func load(with loader: any DataLoading, option: String) async throws -> Data {
        switch self {
        case .bytes(let data): return data
        case .url(let url):
            do {
                return try await loader.data(for: DataRequest(url: url, priority: .high)).data
            } catch {
                throw UsageError("option '\(option)-url': cannot fetch '\(url.redactedString)': \(error)")
            }
        }
    }
}

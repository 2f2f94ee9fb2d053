import Foundation
import Imago
import ImagoCore

extension FuzzTargets {
    /// Every format through the default registry's sniffing, as the pipeline decodes: full size, downsampled, first
    /// frame only and partial, under small limits (16 MP, 100 frames, 64 MiB of animation) so the fuzzer spends its
    /// time on parsing rather than on filling large valid images. A PNG is decoded again with its chunk CRCs
    /// recomputed (``PNGCRCs``).
    static func decode(_ data: Data) {
        let registry = decoders
        let inputs = PNGCRCs.asIsAndResealed(data)
        for options in [
            DecodingOptions(pixelLimit: 16_000_000, frameLimit: 100, animationByteLimit: 64 << 20),
            DecodingOptions(
                targetSize: PixelSize(width: 41, height: 29), pixelLimit: 16_000_000, frameLimit: 100,
                animationByteLimit: 64 << 20),
            DecodingOptions(
                pixelLimit: 16_000_000, frameLimit: 100, animationByteLimit: 64 << 20, decodesFirstFrameOnly: true,
                allowsPartialData: true),
        ] {
            for input in inputs { _ = try? registry.decode(input, options: options) }
        }
    }

    private static let decoders = ImageDecoderRegistry.makeDefault()

    /// The disk cache's entry-file, journal and snapshot parsers, on the raw input and on the input with its
    /// checksums and lengths re-sealed (so that mutations reach the fields behind the checksum).
    static func diskEntry(_ data: Data) {
        var bytes = [UInt8](data)
        bytes.withUnsafeBytes { buffer in
            _ = DiskCacheEntryFile.parse(buffer)
            _ = DiskCacheJournal.parseJournalHeader(buffer)
            _ = DiskCacheJournal.parseRecords(buffer)
            _ = DiskCacheJournal.parseSnapshot(buffer)
        }
        // Entry file re-sealed: header length from bytes 8..<12, payload length and header checksum rewritten.
        if bytes.count >= 80 {
            let headerLength = Int(readU32(bytes, 8))
            if headerLength >= 80, headerLength <= bytes.count {
                writeU64(&bytes, 16, UInt64(bytes.count - headerLength))
                let sum = bytes.withUnsafeBytes {
                    XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[0..<headerLength - 8]))
                }
                writeU64(&bytes, headerLength - 8, sum)
                bytes.withUnsafeBytes { _ = DiskCacheEntryFile.parse($0) }
            }
        }
        // Snapshot re-sealed: trailing checksum over everything before it.
        var snapshot = [UInt8](data)
        if snapshot.count >= 40 {
            let sum = snapshot.withUnsafeBytes {
                XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[0..<snapshot.count - 8]))
            }
            writeU64(&snapshot, snapshot.count - 8, sum)
            snapshot.withUnsafeBytes { _ = DiskCacheJournal.parseSnapshot($0) }
        }
    }

    /// The HTTP response headers Imago interprets itself: `Cache-Control`, `Expires` (cache metadata), HTTP dates
    /// (``HTTPDateParser``), `Retry-After`, `Content-Range` (a resumed download's); each value as URL text through
    /// ``URLRedaction``, and as a JSON string (``JSONStringLiteral``), which must read back as the value. Input:
    /// newline-separated `name: value` lines.
    static func httpHeaders(_ data: Data) {
        let headers = headerFields(String(decoding: data, as: UTF8.self), bareLinesAs: "cache-control")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let validators = HTTPValidators(etag: headers["etag"], lastModified: headers["last-modified"])
        if let metadata = DataCacheMetadata(responseHeaders: headers, validators: validators, now: now),
            let expiresAt = metadata.expiresAt
        {
            _ = expiresAt.timeIntervalSince(now)
        }
        for value in headers.values.prefix(4) {
            _ = HTTPDateParser.date(from: value)
            // A Location or any URL text from a server goes through the redactor (logs) and the key maker.
            _ = URLRedaction.redacted(value)
            _ = URLRedaction.keyText(value)
            _ = RetryPolicy.retryAfterSeconds(value, now: now)
            _ = LoadCoordinator.contentRange(value)
            // A value in a JSON line (access logs, `--json`) reads back as itself.
            let line = Data(("[" + JSONStringLiteral.quoted(value) + "]").utf8)
            precondition(
                (try? JSONSerialization.jsonObject(with: line)) as? [String] == [value], "JSON quoting of \(value)")
            _ = RetryPolicy.default.delay(
                forRetry: 1, after: .statusCode(503, url: URL(fileURLWithPath: "/x")),
                retryAfter: value, now: now, random: 0.5)
        }
    }

    /// The first 32 of `text`'s newline-separated `name: value` lines as headers (names lowercased, values
    /// trimmed); a line without a colon is the value of `bareLinesAs`. A later line replaces an earlier one.
    static func headerFields(_ text: String, bareLinesAs bareName: String) -> [String: String] {
        var headers: [String: String] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true).prefix(32) {
            guard let colon = line.firstIndex(of: ":") else {
                headers[bareName] = String(line)
                continue
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    private static func readU32(_ b: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << UInt32(8 * $1) }
    }

    private static func writeU64(_ b: inout [UInt8], _ at: Int, _ value: UInt64) {
        for i in 0..<8 { b[at + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * i)) }
    }
}

extension FuzzTargets {
    /// The default registry with DEFAULT options (the pipeline's budgets), printing the outcome: what
    /// scripts/hostile-rss.sh measures for each decompression bomb. Not a fuzzing target.
    static func decodeDefaults(_ data: Data) {
        do {
            let image = try ImageDecoderRegistry.makeDefault().decode(data)
            print("decoded \(image.frames.count) frame(s)")
        } catch {
            print("rejected: \(error)")
        }
    }
}

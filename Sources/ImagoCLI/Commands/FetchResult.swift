import Foundation
import Imago

/// What happened to one URL of a fetch.
struct FetchResult: Sendable {
    enum Outcome: Sendable {
        case ok
        /// Failed; the sentence names the URL and says what to do.
        case failed(String)
        /// Cancelled by an interrupt before it finished.
        case cancelled
    }

    /// The URL's position in the list.
    var index: Int
    /// The URL as given.
    var url: String
    var outcome = Outcome.cancelled
    var source: ImageResponse.Source?
    /// Whether the load joined identical work already in flight.
    var isCoalesced = false
    /// Bytes of the encoded image (downloaded or read from disk).
    var bytes: Int?
    /// Size of the delivered image (after `--resize`).
    var width: Int?
    var height: Int?
    var milliseconds = 0
    /// Where `--out` wrote the image.
    var savedPath: String?
    /// Why the image's colour declaration was not used (``ImageContainer/colorWarning``), if so.
    var colorWarning: String?

    var isFailure: Bool {
        if case .failed = outcome { return true }
        return false
    }

    var errorMessage: String? {
        if case .failed(let message) = outcome { return message }
        return nil
    }

    /// `{"url":…,"status":…,"source":…,"bytes":…,"width":…,"height":…,"ms":…,"error":…,"colorWarning":…}`.
    var jsonLine: String {
        var line = JSONLine()
        line.add("url", url)
        line.add("status", isFailure ? "error" : "ok")
        line.add("source", source?.rawValue)
        line.add("bytes", bytes)
        line.add("width", width)
        line.add("height", height)
        line.add("ms", milliseconds)
        line.add("error", errorMessage)
        line.add("colorWarning", colorWarning)
        return line.text
    }

    /// `ok    URL  network  12 KB  64x48  9 ms` or `error URL  <reason>`.
    var plainLine: String {
        if let message = errorMessage { return "error  \(message)" }
        let layer = (source?.rawValue ?? "-") + (isCoalesced ? " (coalesced)" : "")
        var text =
            "ok     \(url)  \(layer)  \(formatBytes(Int64(bytes ?? 0)))  \(width ?? 0)x\(height ?? 0)  \(milliseconds) ms"
        if let savedPath { text += "  → \(savedPath)" }
        if let colorWarning { text += "  (\(colorWarning); colours taken as sRGB)" }
        return text
    }
}

/// The end of a fetch: counts per source layer, failures with their reasons, time.
struct FetchSummary: Sendable {
    var total: Int
    var succeeded = 0
    var failed = 0
    /// Started but cancelled by the interrupt.
    var cancelled = 0
    var memory = 0
    var disk = 0
    var network = 0
    /// From the shared tier (`--redis`).
    var shared = 0
    /// Joined identical work in flight (counted here instead of under their layer).
    var coalesced = 0
    var bytes = 0
    var failures: [(url: String, message: String)] = []
    var elapsed: Duration
    var wasInterrupted: Bool

    init(results: [FetchResult], total: Int, elapsed: Duration, wasInterrupted: Bool) {
        self.total = total
        self.elapsed = elapsed
        self.wasInterrupted = wasInterrupted
        for result in results.sorted(by: { $0.index < $1.index }) {
            switch result.outcome {
            case .ok:
                succeeded += 1
                bytes += result.bytes ?? 0
                if result.isCoalesced {
                    coalesced += 1
                } else {
                    switch result.source {
                    case .memory: memory += 1
                    case .disk: disk += 1
                    case .sharedCache: shared += 1
                    default: network += 1
                    }
                }
            case .failed(let message):
                failed += 1
                failures.append((result.url, message))
            case .cancelled:
                cancelled += 1
            }
        }
    }

    /// URLs never started (the interrupt came first).
    var notStarted: Int { total - succeeded - failed - cancelled }

    var seconds: String { String(format: "%.2f s", Double(elapsed / .milliseconds(1)) / 1000) }

    /// The first line: what was done, how fast.
    var headline: String {
        if wasInterrupted {
            return "interrupted after \(seconds): \(succeeded) of \(total) images fetched, \(failed) failed, "
                + "\(cancelled) cancelled in flight, \(notStarted) not started"
        }
        return "fetched \(succeeded) of \(total) images (\(formatBytes(Int64(bytes)))) in \(seconds)"
    }

    /// The human-readable summary.
    var lines: [String] {
        var lines = [headline.prefix(1).uppercased() + headline.dropFirst() + "."]
        lines.append(
            "  memory \(memory)  disk \(disk)" + (shared > 0 ? "  redis \(shared)" : "")
                + "  network \(network)  coalesced \(coalesced)")
        if !failures.isEmpty {
            lines.append("\(failures.count) failed:")
            for failure in failures { lines.append("  \(failure.message)") }
        }
        return lines
    }
}

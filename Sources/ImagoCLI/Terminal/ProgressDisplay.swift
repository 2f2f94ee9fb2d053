import Foundation
import ImagoCore

/// The live progress of a batch: an overall bar (done/total, bytes, rate, ETA) and the transfers in flight,
/// redrawn in place on a terminal. Thread-safe: workers report, a ticker redraws.
final class ProgressDisplay: Sendable {
    struct Transfer: Sendable {
        var name: String
        var received: Int64
        var expected: Int64?
    }

    struct State: Sendable {
        var total: Int
        var done = 0
        var failed = 0
        var bytes: Int64 = 0
        var transfers: [Int: Transfer] = [:]
        var order: [Int] = []
        var drawnLines = 0
    }

    private let state: Locked<State>
    private let console: Console
    private let started: ContinuousClock.Instant
    /// How many transfers are listed under the bar at most.
    static let maxTransferLines = 6

    init(total: Int, console: Console) {
        self.state = Locked(State(total: total))
        self.console = console
        self.started = .now
    }

    func transferStarted(id: Int, name: String) {
        state.withLock {
            $0.transfers[id] = Transfer(name: name, received: 0, expected: nil)
            $0.order.append(id)
        }
    }

    func transferProgressed(id: Int, received: Int64, expected: Int64?) {
        state.withLock {
            $0.transfers[id]?.received = received
            $0.transfers[id]?.expected = expected
        }
    }

    func itemFinished(id: Int, bytes: Int64, failed: Bool) {
        state.withLock {
            $0.transfers[id] = nil
            $0.order.removeAll { $0 == id }
            $0.done += 1
            if failed { $0.failed += 1 }
            $0.bytes += bytes
        }
    }

    /// Redraws the display in place (only call when the console uses escape codes).
    func redraw() {
        let elapsed = started.duration(to: .now)
        let text = state.withLock { s -> String in
            let lines = Self.render(s, elapsed: elapsed, width: console.width)
            var out = ""
            if s.drawnLines > 0 { out += "\u{1B}[\(s.drawnLines)F" }
            out += "\u{1B}[J" + lines.joined(separator: "\n") + "\n"
            s.drawnLines = lines.count
            return out
        }
        console.write(text)
    }

    /// Removes the drawn display so a summary can follow.
    func clear() {
        let lines = state.withLock { s -> Int in
            defer { s.drawnLines = 0 }
            return s.drawnLines
        }
        if lines > 0 { console.write("\u{1B}[\(lines)F\u{1B}[J") }
    }

    /// The display's lines for a state (pure, for tests).
    static func render(_ s: State, elapsed: Duration, width: Int) -> [String] {
        let seconds = max(0.001, elapsed.timeInterval)
        let rate = Double(s.bytes) / seconds
        let fraction = s.total == 0 ? 1 : Double(s.done) / Double(s.total)
        var eta = "--:--"
        if s.done > 0, s.done < s.total {
            eta = formatDuration(seconds / Double(s.done) * Double(s.total - s.done))
        } else if s.done == s.total {
            eta = "0:00"
        }
        let summary =
            " \(s.done)/\(s.total) images\(s.failed > 0 ? " (\(s.failed) failed)" : "")  \(formatBytes(s.bytes))  \(formatBytes(Int64(rate)))/s  ETA \(eta)"
        let barWidth = max(10, min(40, width - summary.count - 3))
        var lines = ["[" + bar(fraction, width: barWidth) + "]" + summary]
        for id in s.order.prefix(maxTransferLines) {
            guard let t = s.transfers[id] else { continue }
            let name = truncateMiddle(t.name, to: max(10, width - 40))
            if let expected = t.expected, expected > 0 {
                let f = min(1, Double(t.received) / Double(expected))
                lines.append(
                    "  \(name)  [\(bar(f, width: 12))] \(Int(f * 100))%  \(formatBytes(t.received))/\(formatBytes(expected))"
                )
            } else {
                lines.append("  \(name)  \(formatBytes(t.received))")
            }
        }
        if s.order.count > maxTransferLines { lines.append("  … and \(s.order.count - maxTransferLines) more") }
        return lines.map { String($0.prefix(width)) }
    }

    static func bar(_ fraction: Double, width: Int) -> String {
        let filled = Int((min(1, max(0, fraction)) * Double(width)).rounded(.down))
        return String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
    }
}

/// `1.2 MB`, `340 KB`, `12 B` (binary multiples).
func formatBytes(_ bytes: Int64) -> String {
    let b = Double(bytes)
    if b >= 1_073_741_824 { return String(format: "%.1f GB", b / 1_073_741_824) }
    if b >= 1_048_576 { return String(format: "%.1f MB", b / 1_048_576) }
    if b >= 1024 { return String(format: "%.0f KB", b / 1024) }
    return "\(bytes) B"
}

/// `m:ss` or `h:mm:ss`.
func formatDuration(_ seconds: Double) -> String {
    let total = Int(seconds.rounded())
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
    return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
}

/// `very-long-na…file.jpg` when `text` is longer than `length`.
func truncateMiddle(_ text: String, to length: Int) -> String {
    guard text.count > length, length > 3 else { return text }
    let keep = length - 1
    return String(text.prefix(keep / 2)) + "…" + String(text.suffix(keep - keep / 2))
}

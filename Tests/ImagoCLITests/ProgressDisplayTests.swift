import Testing

@testable import ImagoCLI

@Suite struct ProgressDisplayTests {
    @Test func rendersOverallBarWithCountsBytesRateAndETA() {
        var state = ProgressDisplay.State(total: 10)
        state.done = 5
        state.bytes = 10 << 20
        let lines = ProgressDisplay.render(state, elapsed: .seconds(10), width: 100)
        #expect(lines.count == 1)
        #expect(lines[0].contains("5/10 images"))
        #expect(lines[0].contains("10.0 MB"))
        #expect(lines[0].contains("1.0 MB/s"))
        #expect(lines[0].contains("ETA 0:10"))
        #expect(lines[0].hasPrefix("[" + String(repeating: "█", count: 20)))
    }

    @Test func listsTransfersInFlightWithTheirOwnProgress() {
        var state = ProgressDisplay.State(total: 3)
        state.transfers = [
            1: .init(name: "http://x/a.jpg", received: 512, expected: 1024),
            2: .init(name: "http://x/b.jpg", received: 300, expected: nil),
        ]
        state.order = [1, 2]
        let lines = ProgressDisplay.render(state, elapsed: .seconds(1), width: 100)
        #expect(lines.count == 3)
        #expect(lines[1].contains("a.jpg") && lines[1].contains("50%"))
        #expect(lines[2].contains("b.jpg") && lines[2].contains("300 B"))
    }

    @Test func capsTheTransferListAndNeverExceedsTheWidth() {
        var state = ProgressDisplay.State(total: 20)
        for i in 0..<9 {
            state.transfers[i] = .init(
                name: "http://example.com/\(String(repeating: "x", count: 80))\(i).jpg", received: 1, expected: 2)
            state.order.append(i)
        }
        let lines = ProgressDisplay.render(state, elapsed: .seconds(1), width: 60)
        #expect(lines.count == 1 + ProgressDisplay.maxTransferLines + 1)
        #expect(lines.last == "  … and 3 more")
        #expect(lines.allSatisfy { $0.count <= 60 })
    }

    @Test func formatsSizesAndDurations() {
        #expect(formatBytes(12) == "12 B")
        #expect(formatBytes(2048) == "2 KB")
        #expect(formatBytes(3 << 20) == "3.0 MB")
        #expect(formatDuration(65) == "1:05")
        #expect(formatDuration(3725) == "1:02:05")
        #expect(truncateMiddle("abcdefghij", to: 5) == "ab…ij")
    }
}

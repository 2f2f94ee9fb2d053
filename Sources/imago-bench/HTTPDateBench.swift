import Foundation
import ImagoCore

// http-date: parsing one HTTP date header (Expires, Last-Modified, Retry-After) with ImagoCore's hand-written
// HTTPDateParser against what it replaced: three en_US_POSIX DateFormatters built per call and tried in turn.
// Inputs: 64 IMF-fixdates (what servers send), and separately 64 asctime dates (the last form tried, the old
// code's worst case). Every parse is checked against the expected instant.
enum HTTPDateBench {
    static let count = 64

    /// The replaced implementation (ImagePipeline.parseHTTPDate before 2026-11-30).
    static func dateFormatterParse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    static func run() throws {
        let dates = (0..<count).map { Date(timeIntervalSince1970: TimeInterval(1_500_000_000 + $0 * 7_654_321)) }
        func texts(_ format: String) -> [String] {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = TimeZone(identifier: "GMT")
            f.dateFormat = format
            return dates.map { f.string(from: $0) }
        }
        for (label, inputs) in [
            ("IMF-fixdate", texts("EEE, dd MMM yyyy HH:mm:ss 'GMT'")), ("asctime", texts("EEE MMM dd HH:mm:ss yyyy")),
        ] {
            for (i, text) in inputs.enumerated() {
                precondition(HTTPDateParser.date(from: text) == dates[i], "parser disagrees on \(text)")
                precondition(dateFormatterParse(text) == dates[i], "DateFormatter disagrees on \(text)")
            }
            var sink = 0.0
            compare(
                "http-date: parse one \(label) header", unit: "ns/op", goal: 0.1, peerName: "3 DateFormatters per call",
                imago: {
                    nsPerOp(2000) {
                        for text in inputs { sink += HTTPDateParser.date(from: text)?.timeIntervalSince1970 ?? 0 }
                    } / Double(count)
                },
                peer: {
                    nsPerOp(2) {
                        for text in inputs { sink += dateFormatterParse(text)?.timeIntervalSince1970 ?? 0 }
                    } / Double(count)
                })
            if sink == 42 { print("") }
        }
    }
}

import Foundation
import ImagoCore

// url-key: what keeping secrets out of cache keys costs. `ImageRequest.sourceKey` (user-info dropped, values of
// token-like query items replaced by their SHA-256) against what it was before 2026-11-30, the URL's
// `absoluteString`, for three shapes of URL: no query, a query without secrets, a query with a token. Also
// `URL.redactedString` (what every log line and event pays) against `absoluteString`.
enum URLKeyBench {
    static let iterations = 20_000

    static func run() throws {
        let shapes: [(String, String)] = [
            ("plain URL", "https://images.example.com/photos/24/00001234-large.jpg"),
            ("query, no secret", "https://images.example.com/photos/24/00001234.jpg?w=640&h=480&fit=crop&q=80"),
            ("query with token", "https://images.example.com/photos/24/00001234.jpg?w=640&token=9f8e7d6c5b4a3921"),
        ]
        for (label, text) in shapes {
            guard let url = URL(string: text) else { continue }
            let request = ImageRequest(url: url)
            var sink = 0
            compare(
                "url-key: sourceKey, \(label)", unit: "ns/op", goal: nil, peerName: "absoluteString (the old key)",
                imago: { nsPerOp(iterations) { sink &+= request.sourceKey.utf8.count } },
                peer: { nsPerOp(iterations) { sink &+= url.absoluteString.utf8.count } })
            compare(
                "url-key: redactedString, \(label)", unit: "ns/op", goal: nil, peerName: "absoluteString",
                imago: { nsPerOp(iterations) { sink &+= url.redactedString.utf8.count } },
                peer: { nsPerOp(iterations) { sink &+= url.absoluteString.utf8.count } })
            if sink == 42 { print("") }
        }
    }
}

import Foundation
import Testing

@testable import ImagoCore

@Suite struct HTTPDateParserTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example).
    static let example = Date(timeIntervalSince1970: 784_111_777)

    @Test func parsesTheThreeFormsOfRFC9110sExample() {
        #expect(HTTPDateParser.date(from: "Sun, 06 Nov 1994 08:49:37 GMT") == Self.example)
        #expect(HTTPDateParser.date(from: "Sunday, 06-Nov-94 08:49:37 GMT") == Self.example)
        #expect(HTTPDateParser.date(from: "Sun Nov  6 08:49:37 1994") == Self.example)
        #expect(HTTPDateParser.date(from: "Sun Nov 06 08:49:37 1994") == Self.example)
    }

    @Test func acceptsAnyCaseSurroundingSpaceAndUTC() {
        #expect(HTTPDateParser.date(from: "  sun, 06 NOV 1994 08:49:37 gmt\t") == Self.example)
        #expect(HTTPDateParser.date(from: "Sun, 06 Nov 1994 08:49:37 UTC") == Self.example)
        #expect(HTTPDateParser.date(from: "SUNDAY, 06-nov-94 08:49:37 GMT") == Self.example)
    }

    @Test func mapsTwoDigitYearsLikePOSIX() {
        #expect(HTTPDateParser.date(from: "Thursday, 01-Jan-70 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(
            HTTPDateParser.date(from: "Wednesday, 21-Oct-15 07:28:05 GMT") == Date(timeIntervalSince1970: 1_445_412_485)
        )
        // 68 → 2068, 69 → 1969
        #expect(
            HTTPDateParser.date(from: "Sunday, 31-Dec-68 23:59:59 GMT") == Date(timeIntervalSince1970: 3_124_223_999))
        #expect(
            HTTPDateParser.date(from: "Wednesday, 01-Jan-69 00:00:00 GMT") == Date(timeIntervalSince1970: -31_536_000))
    }

    @Test func handlesLeapDaysAndCenturyRules() {
        #expect(
            HTTPDateParser.date(from: "Thu, 29 Feb 2024 12:00:00 GMT") == Date(timeIntervalSince1970: 1_709_208_000))
        #expect(
            HTTPDateParser.date(from: "Tue, 29 Feb 2000 00:00:00 GMT") == Date(timeIntervalSince1970: 951_782_400))
        #expect(HTTPDateParser.date(from: "Fri, 29 Feb 2023 00:00:00 GMT") == nil)
        #expect(HTTPDateParser.date(from: "Thu, 29 Feb 2100 00:00:00 GMT") == nil)
        // a leap second is the next minute's first second
        #expect(
            HTTPDateParser.date(from: "Sat, 31 Dec 2016 23:59:60 GMT") == Date(timeIntervalSince1970: 1_483_228_800))
    }

    @Test(arguments: [
        "", "   ", "soon", "0", "-1", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 GMT+1",
        "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 32 Jan 1994 08:49:37 GMT", "Sun, 31 Apr 1994 08:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT GMT",
        "Sux, 06 Nov 1994 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT", "Sun,06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT", "Sundae, 06-Nov-94 08:49:37 GMT", "Sun, 06-Nov-94 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994", "Sun Nov  6 08:49:37 94", "Sun Nov  6 08:49:37 1994 GMT",
        "Sunday Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", "Sun, ０6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 199４ 08:49:37 GMT", String(repeating: "Sun, ", count: 100),
    ])
    func rejectsAnythingElse(_ text: String) {
        #expect(HTTPDateParser.date(from: text) == nil)
    }

    @Test func agreesWithDateFormatterOnTwoThousandRandomDatesInEveryForm() {
        // Given DateFormatter (the implementation this replaced) writing each form
        func formatter(_ format: String) -> DateFormatter {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = TimeZone(identifier: "GMT")
            f.dateFormat = format
            return f
        }
        let imf = formatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'")
        let rfc850 = formatter("EEEE, dd-MMM-yy HH:mm:ss 'GMT'")
        let asctime = formatter("EEE MMM d HH:mm:ss yyyy")
        var state: UInt64 = 20_261_130
        for _ in 0..<2000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // 1969-01-01 … 2068-12-31, whole seconds (the range where the two-digit year is unambiguous)
            let seconds = -31_536_000 + Int(state >> 33) % 3_155_760_000
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            // When each form is parsed by hand; Then it is the same instant
            var asc = asctime.string(from: date)
            // asctime pads a one-digit day with a space: "Nov  6"
            if let range = asc.range(of: #" \d "#, options: .regularExpression) {
                asc.replaceSubrange(range, with: " " + asc[range])
            }
            #expect(HTTPDateParser.date(from: imf.string(from: date)) == date, "\(imf.string(from: date))")
            #expect(HTTPDateParser.date(from: rfc850.string(from: date)) == date, "\(rfc850.string(from: date))")
            #expect(HTTPDateParser.date(from: asc) == date, "\(asc)")
        }
    }

    @Test func neverTrapsOnRandomBytes() {
        var state: UInt64 = 7
        var parsed = 0
        let seed = Array("Sun, 06 Nov 1994 08:49:37 GMT".utf8)
        for round in 0..<20_000 {
            var bytes = seed
            for _ in 0..<(1 + round % 4) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let index = Int(state >> 40) % bytes.count
                bytes[index] = UInt8(truncatingIfNeeded: state >> 16)
            }
            if HTTPDateParser.date(from: String(decoding: bytes, as: UTF8.self)) != nil { parsed += 1 }
        }
        // Some flips land on the weekday name or keep a valid date; most do not.
        #expect(parsed > 0 && parsed < 20_000)
    }

    @Test func formatsIMFFixdateThatParsesBack() {
        // Given RFC 9110's example, the epoch, a leap day and a date before 1970
        let dates = [
            Self.example, Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 951_782_400),
            Date(timeIntervalSince1970: -31_536_000),
        ]
        // When each is formatted, Then the text is the preferred form and reads back as the same second
        #expect(HTTPDateParser.imfFixdate(from: Self.example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDateParser.imfFixdate(from: Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDateParser.imfFixdate(from: Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 GMT")
        for date in dates { #expect(HTTPDateParser.date(from: HTTPDateParser.imfFixdate(from: date)) == date) }
    }
}

import Foundation

/// Parses HTTP dates (RFC 9110 §5.6.7) by hand: no `DateFormatter`, no locale, no allocation.
///
/// Accepts the three forms a recipient must accept:
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` (what servers send today)
/// - obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT` (two-digit year: 00–68 → 20xx, 69–99 → 19xx, as POSIX
///   `strptime %y` does; RFC 9110's "more than 50 years in the future" rule would make the result depend on
///   today's date)
/// - ANSI C `asctime()`: `Sun Nov  6 08:49:37 1994` (day padded with a space or written with two digits)
///
/// Day and month names are matched case-insensitively; the weekday is not checked against the date (RFC 9110
/// lets a recipient ignore it). Leading and trailing spaces and tabs are ignored. `GMT` (or `UTC`) is required
/// where the form has a zone. The day must exist in its month (29 Feb only in leap years), hours 0–23, minutes
/// 0–59, seconds 0–60 (a leap second counts as the next minute's first). Anything else is `nil`, never a trap.
/// It replaces a `DateFormatter` version (imago-bench `http-date` compares the two).
///
/// ``imfFixdate(from:)`` writes the preferred form, for the test servers that send `Last-Modified`.
package enum HTTPDateParser {
    /// The date in `text`, or `nil` when it is none of the three forms.
    package static func date(from text: String) -> Date? {
        var copy = text
        return copy.withUTF8 { parse($0) }
    }

    /// The date in `bytes` (UTF-8), or `nil`.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        guard end - start >= 24, end - start <= 40 else { return nil }
        var s = Scanner(bytes: bytes, position: start, end: end)
        // Every form opens with a day name: 3 letters (IMF-fixdate, asctime) or the full name (RFC 850).
        let nameStart = s.position
        while s.position < end, isLetter(bytes[s.position]) { s.position += 1 }
        let nameLength = s.position - nameStart
        guard nameLength >= 3, weekday(bytes, at: nameStart, length: nameLength) else { return nil }
        var fields = Fields()
        if s.take(0x2C) {  // ","
            guard s.take(0x20) else { return nil }
            if nameLength == 3 {
                // IMF-fixdate: DD SP Mon SP YYYY SP hh:mm:ss SP GMT
                guard let day = s.digits(2), s.take(0x20), let month = s.month(), s.take(0x20),
                    let year = s.digits(4), s.take(0x20)
                else { return nil }
                fields = Fields(year: year, month: month, day: day)
            } else {
                // RFC 850: DD-Mon-YY SP hh:mm:ss SP GMT
                guard let day = s.digits(2), s.take(0x2D), let month = s.month(), s.take(0x2D),
                    let shortYear = s.digits(2), s.take(0x20)
                else { return nil }
                fields = Fields(year: shortYear < 69 ? 2000 + shortYear : 1900 + shortYear, month: month, day: day)
            }
            guard s.clock(into: &fields), s.take(0x20), s.zone(), s.position == end else { return nil }
        } else {
            // asctime: Mon SP (SP D / DD) SP hh:mm:ss SP YYYY
            guard nameLength == 3, s.take(0x20), let month = s.month(), s.take(0x20) else { return nil }
            let day: Int
            if s.take(0x20) {
                guard let d = s.digits(1) else { return nil }
                day = d
            } else {
                guard let d = s.digits(2) else { return nil }
                day = d
            }
            fields = Fields(year: 0, month: month, day: day)
            guard s.take(0x20), s.clock(into: &fields), s.take(0x20), let year = s.digits(4), s.position == end
            else { return nil }
            fields.year = year
        }
        return fields.date
    }

    /// The parts of a date as read, checked by ``date``.
    private struct Fields {
        var year = 0
        var month = 0
        var day = 0
        var hour = 0
        var minute = 0
        var second = 0

        /// The instant, or `nil` when a field is out of range.
        var date: Date? {
            guard (1...12).contains(month), day >= 1, day <= HTTPDateParser.daysIn(month: month, year: year),
                hour <= 23, minute <= 59, second <= 60
            else { return nil }
            let days = HTTPDateParser.daysFromCivil(year: year, month: month, day: day)
            let seconds = days * 86_400 + hour * 3600 + minute * 60 + second
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
    }

    /// A cursor over the trimmed bytes.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var position: Int
        let end: Int

        /// Consumes `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            guard position < end, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        /// Exactly `count` ASCII digits as a number.
        mutating func digits(_ count: Int) -> Int? {
            guard end - position >= count else { return nil }
            var value = 0
            for i in position..<(position + count) {
                let d = Int(bytes[i]) &- 0x30
                guard d >= 0, d <= 9 else { return nil }
                value = value * 10 + d
            }
            position += count
            return value
        }

        /// A three-letter month name (case-insensitive) as 1…12.
        mutating func month() -> Int? {
            guard end - position >= 3 else { return nil }
            let key = HTTPDateParser.threeLetterKey(bytes, at: position)
            guard let index = HTTPDateParser.monthKeys.firstIndex(of: key) else { return nil }
            position += 3
            return index + 1
        }

        /// `hh:mm:ss`.
        mutating func clock(into fields: inout Fields) -> Bool {
            guard let h = digits(2), take(0x3A), let m = digits(2), take(0x3A), let sec = digits(2) else {
                return false
            }
            fields.hour = h
            fields.minute = m
            fields.second = sec
            return true
        }

        /// `GMT` or `UTC` (case-insensitive).
        mutating func zone() -> Bool {
            guard end - position >= 3 else { return false }
            let key = HTTPDateParser.threeLetterKey(bytes, at: position)
            guard key == HTTPDateParser.key("gmt") || key == HTTPDateParser.key("utc") else { return false }
            position += 3
            return true
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    /// Three bytes lowercased and packed into one integer (non-letters keep their value, so they never match).
    fileprivate static func threeLetterKey(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt32 {
        func lower(_ b: UInt8) -> UInt32 { UInt32(isLetter(b) ? b | 0x20 : b) }
        return lower(bytes[index]) << 16 | lower(bytes[index + 1]) << 8 | lower(bytes[index + 2])
    }

    fileprivate static func key(_ name: StaticString) -> UInt32 {
        name.withUTF8Buffer { threeLetterKey($0, at: 0) }
    }

    fileprivate static let monthKeys: [UInt32] = [
        key("jan"), key("feb"), key("mar"), key("apr"), key("may"), key("jun"),
        key("jul"), key("aug"), key("sep"), key("oct"), key("nov"), key("dec"),
    ]

    private static let weekdayNames: [[UInt8]] = [
        "monday", "tuesday", "wednesday", "thursday", "friday",
        "saturday", "sunday",
    ].map { Array($0.utf8) }

    /// Whether `length` letters at `index` are a weekday's three-letter abbreviation or its full name.
    private static func weekday(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, length: Int) -> Bool {
        weekdayNames.contains { name in
            guard length == 3 || length == name.count else { return false }
            for i in 0..<length where bytes[index + i] | 0x20 != name[i] { return false }
            return true
        }
    }

    fileprivate static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    fileprivate static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

// MARK: - Formatting

extension HTTPDateParser {
    private static let weekdayAbbreviations = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // from 1970-01-01
    private static let monthAbbreviations = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), whole seconds rounded down; what
    /// ``date(from:)`` reads back.
    package static func imfFixdate(from date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let weekday = weekdayAbbreviations[((days % 7) + 7) % 7]
        return "\(weekday), \(two(day)) \(monthAbbreviations[month - 1]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`, the inverse of
    /// `daysFromCivil`).
    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

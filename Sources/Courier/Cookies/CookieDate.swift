import Foundation

/// The cookie date algorithm of RFC 6265bis §5.1.1, which reads the dates servers really send (`Wed, 09 Jun 2021
/// 10:18:14 GMT`, `Wednesday, 09-Jun-21 10:18:14 GMT`, `Wed Jun  9 10:18:14 2021`, and worse) the way browsers do.
///
/// The value is cut into tokens at delimiters; the first token that reads as a time, then a day of the month, a
/// month and a year (each only until found) is taken, the rest ignored. Two-digit years 70–99 mean 1970–1999 and
/// 00–69 mean 2000–2069. A missing part, a value out of range (hour over 23, day over 31, year before 1601) or a
/// date that does not exist (30 February) makes the whole date invalid: `nil`.
enum CookieDate {
    /// The instant `text` names, in UTC; `nil` when it is not a cookie date.
    static func parse(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in tokens(Array(text.utf8)) {
            if time == nil, let found = Self.time(token) {
                time = found
            } else if day == nil, let found = leadingNumber(token, digits: 1...2) {
                day = found
            } else if month == nil, let found = Self.month(token) {
                month = found
            } else if year == nil, let found = leadingNumber(token, digits: 2...4) {
                year = found
            }
        }
        guard let time, let day, let month, var year else { return nil }
        if (70...99).contains(year) {
            year += 1900
        } else if (0...69).contains(year) {
            year += 2000
        }
        guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59,
            day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The runs of non-delimiter bytes (§5.1.1's `date-token`s).
    private static func tokens(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var tokens: [ArraySlice<UInt8>] = []
        var start: Int?
        for (index, byte) in bytes.enumerated() {
            if isDelimiter(byte) {
                if let begun = start { tokens.append(bytes[begun..<index]) }
                start = nil
            } else if start == nil {
                start = index
            }
        }
        if let begun = start { tokens.append(bytes[begun...]) }
        return tokens
    }

    /// `%x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte) || (0x5B...0x60).contains(byte)
            || (0x7B...0x7E).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// The number a token starts with when it is `digits` digits long and followed by the token's end or a
    /// non-digit (`1*2DIGIT [ non-digit *OCTET ]`, `2*4DIGIT [ non-digit *OCTET ]`).
    private static func leadingNumber(_ token: ArraySlice<UInt8>, digits: ClosedRange<Int>) -> Int? {
        let run = token.prefix(while: isDigit)
        guard digits.contains(run.count) else { return nil }
        return run.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// `hms-time [ non-digit *OCTET ]`, each of the three fields one or two digits.
    private static func time(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var fields: [Int] = []
        var index = token.startIndex
        while fields.count < 3 {
            var value = 0
            var count = 0
            while index < token.endIndex, isDigit(token[index]), count < 2 {
                value = value * 10 + Int(token[index] - 0x30)
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            fields.append(value)
            if fields.count < 3 {
                guard index < token.endIndex, token[index] == UInt8(ascii: ":") else { return nil }
                index += 1
            }
        }
        guard index == token.endIndex || !isDigit(token[index]) else { return nil }
        return (fields[0], fields[1], fields[2])
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// 1–12 when the token starts with a month's three letters, in any case.
    private static func month(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3).map { $0 | 0x20 }, as: UTF8.self)
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date in the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

import Foundation
import Testing

@testable import Courier

/// The cookie date algorithm of RFC 6265bis §5.1.1, case by case.
struct CookieDateTests {
    private static func date(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0
    )
        -> Date
    {
        var components = DateComponents(
            calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(identifier: "UTC"), year: year,
            month: month, day: day, hour: hour, minute: minute, second: second)
        components.nanosecond = 0
        return components.date!
    }

    static let valid: [(String, Date)] = [
        ("Wed, 09 Jun 2021 10:18:14 GMT", date(2021, 6, 9, 10, 18, 14)),  // RFC 1123
        ("Wednesday, 09-Jun-21 10:18:14 GMT", date(2021, 6, 9, 10, 18, 14)),  // RFC 850
        ("Wed Jun  9 10:18:14 2021", date(2021, 6, 9, 10, 18, 14)),  // asctime
        ("09 Jun 2021 10:18:14", date(2021, 6, 9, 10, 18, 14)),
        ("Wed, 09-Jun-2021 10:18:14 GMT", date(2021, 6, 9, 10, 18, 14)),
        ("2021 Jun 09 10:18:14", date(2021, 6, 9, 10, 18, 14)),  // the year too long for a day of the month
        ("Thu, 01 Jan 1970 00:00:00 GMT", date(1970, 1, 1)),
        ("1 jAN 99 1:2:3", date(1999, 1, 1, 1, 2, 3)),  // one-digit fields, any case, 99 is 1999
        ("01 Jan 69 00:00:00", date(2069, 1, 1)),  // 69 is 2069
        ("01 Jan 70 00:00:00", date(1970, 1, 1)),  // 70 is 1970
        ("01 Jan 00 00:00:00", date(2000, 1, 1)),
        ("01 January 2030 12:00:00", date(2030, 1, 1, 12)),  // the month's first three letters
        ("01 Jan 2030 12:00:00am", date(2030, 1, 1, 12)),  // text after the time is ignored
        ("29 Feb 2024 00:00:00", date(2024, 2, 29)),
        ("31 Dec 9999 23:59:59", date(9999, 12, 31, 23, 59, 59)),
        ("01 Jan 1601 00:00:00", date(1601, 1, 1)),
        ("Jan 01 2030 00:00:00 GMT+0100", date(2030, 1, 1)),  // the zone is not a date part
        ("  ,;01 Jan 2030 00:00:00;,  ", date(2030, 1, 1)),  // delimiters around
        ("01 Jan 2030 00:00:00 05", date(2030, 1, 1)),  // the first year found wins
    ]

    static let invalid: [String] = [
        "", "never", "Wed, 09 Jun 2021",  // no time
        "10:18:14 2021",  // no month nor day
        "32 Jan 2030 00:00:00", "0 Jan 2030 00:00:00",  // day out of range
        "30 Feb 2030 00:00:00", "29 Feb 2023 00:00:00", "31 Apr 2030 00:00:00",  // no such date
        "01 Jan 1600 00:00:00",  // before 1601
        "01 Jan 2030 24:00:00", "01 Jan 2030 23:60:00", "01 Jan 2030 23:59:60",  // time out of range
        "01 Foo 2030 00:00:00",  // no month
        "01 Jan 2030 100:00:00",  // a time field of three digits
        "001 Jan 2030 00:00:00",  // "001" is no day but a year (1); then 2030 is neither: no day
        "01Jan 2030 12:00:00",  // "01Jan" is taken as the day, so no month is ever found
        "01 Jan 12345 00:00:00",  // a five-digit year
    ]

    @Test(arguments: valid) func parses(_ text: String, expected: Date) {
        #expect(CookieDate.parse(text) == expected, "\(text)")
    }

    @Test(arguments: invalid) func refuses(_ text: String) {
        #expect(CookieDate.parse(text) == nil, "\(text)")
    }
}

/// The Public Suffix List as compiled in.
struct PublicSuffixListTests {
    @Test(arguments: [
        ("org", true), ("co.uk", true), ("uk", true), ("github.io", true), ("s3.amazonaws.com", true),
        ("example.org", false), ("example.co.uk", false), ("me.github.io", false),
        ("anything.ck", true), ("www.ck", false),  // *.ck, with !www.ck as its exception
        ("localhost", true), ("local", true),  // one label: the implicit * rule
        ("xn--55qx5d.cn", true), ("公司.cn", true),  // an internationalised rule in both forms
    ])
    func isPublicSuffix(_ domain: String, expected: Bool) {
        #expect(PublicSuffixList.isPublicSuffix(domain) == expected, "\(domain)")
    }

    @Test func sourceIsNamed() {
        #expect(CookieJar.publicSuffixListSource.contains("publicsuffix"))
    }
}

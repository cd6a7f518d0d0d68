import Foundation

@testable import Courier

/// HTTP dates (RFC 9110's IMF-fixdate) for test servers and fixtures: written as the session's cache writes them.
enum HTTPDate {
    static func format(_ date: Date) -> String { HTTPCaching.formatDate(date) }
}

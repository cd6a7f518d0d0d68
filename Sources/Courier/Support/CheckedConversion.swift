/// Conversions of numbers a caller or a server chose into the integer units clocks and sizes use, without trapping.
///
/// Swift traps when a `Double` that is infinite, NaN or out of range becomes an integer, and on integer overflow;
/// every such value that comes from outside (timeouts, delays, `Content-Length`, resume offsets) goes through here.
enum CheckedConversion {
    /// The longest interval Courier waits for anything: 100 years, in milliseconds. Longer means "never" and is
    /// clamped here so that NIO's nanosecond `TimeAmount` and clock arithmetic cannot overflow.
    static let maximumMilliseconds: Int64 = 100 * 365 * 24 * 60 * 60 * 1000

    /// `seconds` in whole milliseconds, clamped to `0...maximumMilliseconds`; NaN and negative values are 0.
    static func milliseconds(_ seconds: Double) -> Int64 {
        let milliseconds = seconds * 1000
        guard !milliseconds.isNaN, milliseconds > 0 else { return 0 }
        guard milliseconds < Double(maximumMilliseconds) else { return maximumMilliseconds }
        return Int64(milliseconds.rounded(.towardZero))
    }

    /// `duration` in whole milliseconds, clamped as the seconds form clamps.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return milliseconds(Double(seconds) + Double(attoseconds) * 1e-18)
    }

    /// `seconds` as a `Duration`, clamped as ``milliseconds(_:)`` clamps.
    static func duration(_ seconds: Double) -> Duration {
        .milliseconds(milliseconds(seconds))
    }

    /// `seconds` in nanoseconds, clamped as ``milliseconds(_:)`` clamps.
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(milliseconds(seconds)) * 1_000_000
    }

    /// `lhs + rhs`, or `nil` when the sum does not fit in `Int64`.
    static func sum(_ lhs: Int64, _ rhs: Int64) -> Int64? {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        return overflow ? nil : sum
    }
}

import Foundation

/// A number of seconds given to `--timeout` or `--max-time`, checked before it reaches the library.
///
/// The library turns limits into milliseconds with `Int64(seconds * 1000)`, which traps for infinity, NaN and
/// anything past about 292 million years; a limit that is not a positive finite number is a mistake anyway, so it
/// is refused with a message rather than clamped (curl refuses a negative or non-numeric `--max-time` too).
enum TimeLimit {
    /// The largest limit accepted: 1,000,000,000 s (about 31 years), far from any overflow in milliseconds or
    /// nanoseconds (`1e9 s` is `1e18 ns`, below `Int64.max`).
    static let maximum: TimeInterval = 1_000_000_000

    /// `seconds`, when it is a finite number above 0 and at most ``maximum``.
    ///
    /// - Parameter flag: the option's name, for the message (`--timeout`).
    /// - Throws: ``CommandFailure`` naming the flag and the value.
    static func checked(_ seconds: Double, flag: String) throws -> TimeInterval {
        guard seconds.isFinite, seconds > 0, seconds <= maximum else {
            throw CommandFailure(
                .failure,
                "\(flag) \(seconds): give a number of seconds greater than 0 and at most \(Int(maximum)) "
                    + "(about 31 years)")
        }
        return seconds
    }

    /// `2 s`, `0.5 s`: a limit as the user gave it, for messages.
    static func describe(_ seconds: TimeInterval) -> String {
        // Only whole numbers in Int's range are printed without a fraction; anything else as the Double prints.
        if seconds == seconds.rounded(), abs(seconds) < 1e15 { return "\(Int(seconds)) s" }
        return "\(seconds) s"
    }
}

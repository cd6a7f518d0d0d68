import Foundation

/// A `Content-Range: bytes <start>-<end>/<total or *>` of a `206` (RFC 9110 §14.4), parsed strictly: a resumed
/// download appends its body at `start`, so every number must be one, and the range must make sense on its own.
struct ContentRange: Sendable, Hashable {
    /// The first byte's offset.
    var start: Int64
    /// The last byte's offset (inclusive).
    var end: Int64
    /// The representation's whole length; `nil` for `*`.
    var total: Int64?

    /// The number of bytes in the range.
    var length: Int64 { end - start + 1 }

    /// The range in `value`; `nil` unless it is `bytes start-end/total` with `start ≤ end`, `end < total`, and
    /// every number a plain decimal below `Int64.max` (so ``length`` cannot overflow).
    init?(_ value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Self.number(bounds[0]), let end = Self.number(bounds[1]), start <= end,
            end < Int64.max
        else { return nil }
        var total: Int64?
        if halves[1] != "*" {
            guard let whole = Self.number(halves[1]), end < whole else { return nil }
            total = whole
        }
        self.start = start
        self.end = end
        self.total = total
    }

    /// Digits only: `Int64("+5")` and `Int64("-5")` would pass otherwise.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }
}

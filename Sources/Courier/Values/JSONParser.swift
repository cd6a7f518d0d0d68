import Foundation

/// Reads JSON text (RFC 8259) into a ``JSON`` value in one pass over the bytes.
///
/// Why not `JSONDecoder` with `JSON`'s `Decodable` conformance: that tries each type in turn and learns the kind of
/// a value from the errors thrown by the wrong guesses (two to four per value), which is slow, and turns every
/// parse into thousands of thrown errors where a tool watches throws (Swift Testing captures a backtrace for each);
/// and it reads every number as a `Double`, losing the digits of integers beyond 2⁵³.
///
/// Rules: integers without a fraction or exponent that fit `Int64` are ``JSON/integer(_:)``, larger ones that fit
/// `UInt64` ``JSON/unsignedInteger(_:)``; every other number is a `Double` and must be finite. Strings must be valid
/// UTF-8 without raw control characters; `\u` escapes must pair their surrogates. A repeated object key keeps its
/// last value. Nesting deeper than ``maximumDepth`` is refused rather than risking the stack on hostile input.
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted (`JSONSerialization`'s limit too).
    static let maximumDepth = 512

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Parses a whole document (a top-level scalar is allowed).
    ///
    /// - Throws: `DecodingError.dataCorrupted`, saying what is wrong and at which byte.
    static func parse(_ data: Data) throws -> JSON {
        try data.withUnsafeBytes { buffer in
            var parser = JSONParser(bytes: buffer)
            parser.skipWhitespace()
            let value = try parser.parseValue()
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.failure("unexpected text after the value") }
            return value
        }
    }

    // MARK: Values

    private mutating func parseValue() throws -> JSON {
        guard index < bytes.count else { throw failure("the text ends where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    private mutating func parseLiteral(_ word: StaticString, _ value: JSON) throws -> JSON {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard bytes.count - index >= expected.count,
            expected.indices.allSatisfy({ bytes[index + $0] == expected[$0] })
        else { throw failure("unexpected character") }
        index += expected.count
        return value
    }

    private mutating func parseObject() throws -> JSON {
        try enterContainer()
        var object: [String: JSON] = [:]
        if try consume(UInt8(ascii: "}")) {
            depth -= 1
            return .object(object)
        }
        while true {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw failure("an object key must be a string")
            }
            let key = try parseString()
            skipWhitespace()
            guard try consume(UInt8(ascii: ":")) else { throw failure("expected ':' after an object key") }
            object[key] = try parseValue()
            skipWhitespace()
            if try consume(UInt8(ascii: "}")) { break }
            guard try consume(UInt8(ascii: ",")) else { throw failure("expected ',' or '}' in an object") }
        }
        depth -= 1
        return .object(object)
    }

    private mutating func parseArray() throws -> JSON {
        try enterContainer()
        var array: [JSON] = []
        if try consume(UInt8(ascii: "]")) {
            depth -= 1
            return .array(array)
        }
        while true {
            array.append(try parseValue())
            skipWhitespace()
            if try consume(UInt8(ascii: "]")) { break }
            guard try consume(UInt8(ascii: ",")) else { throw failure("expected ',' or ']' in an array") }
        }
        depth -= 1
        return .array(array)
    }

    /// Steps over the opening bracket and the whitespace after it.
    private mutating func enterContainer() throws {
        guard depth < Self.maximumDepth else {
            throw failure("arrays and objects nest deeper than \(Self.maximumDepth) levels")
        }
        depth += 1
        index += 1
        skipWhitespace()
    }

    /// Steps over `byte` (and the whitespace after it) when it is next.
    private mutating func consume(_ byte: UInt8) throws -> Bool {
        guard index < bytes.count else { throw failure("the text ends inside an array or object") }
        guard bytes[index] == byte else { return false }
        index += 1
        skipWhitespace()
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    // MARK: Strings

    private mutating func parseString() throws -> String {
        index += 1  // the opening quote
        let start = index
        // The common string has no escapes: take its bytes whole.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                return try text(start..<index)
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("a control character inside a string") }
            index += 1
        }
        var utf8 = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(bytes: utf8, encoding: .utf8) else {
                    throw failure("a string is not valid UTF-8", at: start)
                }
                return string
            case UInt8(ascii: "\\"):
                try appendEscape(to: &utf8)
            case ..<0x20:
                index -= 1
                throw failure("a control character inside a string")
            default:
                utf8.append(byte)
            }
        }
        throw failure("the text ends inside a string")
    }

    private func text(_ range: Range<Int>) throws -> String {
        guard let string = String(bytes: UnsafeRawBufferPointer(rebasing: bytes[range]), encoding: .utf8) else {
            throw failure("a string is not valid UTF-8", at: range.lowerBound)
        }
        return string
    }

    /// Reads the escape after a backslash and appends what it stands for as UTF-8.
    private mutating func appendEscape(to utf8: inout [UInt8]) throws {
        guard index < bytes.count else { throw failure("the text ends inside a string") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try hexQuad())
            if (0xD800..<0xDC00).contains(scalar) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure("a \\u escape is half of a surrogate pair") }
                index += 2
                let low = UInt32(try hexQuad())
                guard (0xDC00..<0xE000).contains(low) else { throw failure("a \\u escape is half of a surrogate pair") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else {
                throw failure("a \\u escape is half of a surrogate pair")
            }
            UTF8.encode(unicode) { utf8.append($0) }
        default:
            index -= 1
            throw failure("an unknown escape in a string")
        }
    }

    private mutating func hexQuad() throws -> UInt16 {
        guard bytes.count - index >= 4 else { throw failure("a \\u escape needs four hexadecimal digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hexadecimal digits")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    // MARK: Numbers

    private mutating func parseNumber() throws -> JSON {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a number needs digits", at: start) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw failure("a number starts with 0", at: start) }
        } else {
            skipDigits()
        }
        let integerEnd = index
        var isIntegral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isIntegral = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a fraction needs digits") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            isIntegral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("an exponent needs digits") }
            skipDigits()
        }
        if isIntegral, let integer = integer(from: negative ? start + 1 : start, to: integerEnd, negative: negative) {
            return integer
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw failure("the number \(text.prefix(40)) is out of range", at: start)
        }
        return .number(value)
    }

    /// The digits as an exact integer, or `nil` when they fit neither `Int64` nor `UInt64`.
    private func integer(from start: Int, to end: Int, negative: Bool) -> JSON? {
        var magnitude: UInt64 = 0
        for position in start..<end {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[position] - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            magnitude = sum
        }
        if negative {
            if magnitude == 0 { return .number(-0.0) }
            if magnitude <= UInt64(Int64.max) { return .integer(-Int64(magnitude)) }
            if magnitude == UInt64(Int64.max) + 1 { return .integer(Int64.min) }
            return nil
        }
        if let value = Int64(exactly: magnitude) { return .integer(value) }
        return .unsignedInteger(magnitude)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private func failure(_ problem: String, at position: Int? = nil) -> DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: [],
                debugDescription: "The data is not valid JSON: \(problem) (at byte \(position ?? index))."))
    }
}

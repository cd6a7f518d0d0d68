import Foundation
import Testing

@testable import Courier

/// ``JSON/init(data:)``: exact integers, and refusals with a reason instead of a crash or a wrong value.
@Suite struct JSONParserTests {
    static func parse(_ text: String) throws -> JSON { try JSON(data: Data(text.utf8)) }

    @Test func integersKeepEveryDigit() throws {
        let json = try Self.parse(
            #"{"id": 9007199254740993, "big": 18446744073709551615, "min": -9223372036854775808}"#)
        #expect(json["id"]?.intValue == 9_007_199_254_740_993)
        #expect(json["id"] == .integer(9_007_199_254_740_993))
        #expect(json["big"] == .unsignedInteger(.max))
        #expect(json["big"]?.uint64Value == .max)
        #expect(json["big"]?.intValue == nil)
        #expect(json["min"]?.int64Value == .min)
        let written = String(decoding: try JSONEncoder().encode(json), as: UTF8.self)
        #expect(written.contains("9007199254740993"))
        #expect(written.contains("18446744073709551615"))
        #expect(written.contains("-9223372036854775808"))
        #expect(try JSON(data: JSONEncoder().encode(json)) == json)
    }

    @Test func otherNumbersAreDoubles() throws {
        #expect(try Self.parse("1.5") == .number(1.5))
        #expect(try Self.parse("1e2") == .number(100))
        guard case .number = try Self.parse("18446744073709551616") else {
            Issue.record("a number beyond 64 bits is not a Double")
            return
        }
        guard case .number = try Self.parse("-9223372036854775809") else {
            Issue.record("a number below Int64.min is not a Double")
            return
        }
        #expect(try Self.parse("-0").doubleValue?.sign == .minus)
    }

    @Test func numbersCompareAndHashByValue() {
        #expect(JSON.integer(3) == JSON.number(3))
        #expect(JSON.unsignedInteger(1 << 63) == JSON.number(9_223_372_036_854_775_808))
        #expect(JSON.integer(-1) != JSON.unsignedInteger(.max))
        #expect(JSON.integer(3) != JSON.number(3.5))
        #expect(Set<JSON>([.integer(3), .number(3), .unsignedInteger(3)]).count == 1)
    }

    @Test func aModelDecodesLargeIdsExactly() throws {
        struct Item: Decodable { var id: Int64 }
        #expect(try Self.parse(#"{"id": 9007199254740993}"#).decode(Item.self).id == 9_007_199_254_740_993)
    }

    @Test(arguments: [
        "", " ", "[", "[1,]", "{\"a\":1,}", "{a:1}", "01", "-", "1.", "1e", ".5", "+1", "nul", "tru", "[1 2]",
        "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "1e400", "NaN",
        "[1] x", "{\"a\" 1}", "\u{1}", "\"a\u{1}b\"", "\"a\nb\"",
    ])
    func malformedTextIsRefused(_ text: String) {
        #expect(throws: DecodingError.self) { try Self.parse(text) }
    }

    @Test func invalidUTF8IsRefused() {
        #expect(throws: DecodingError.self) { try JSON(data: Data([0x22, 0xC3, 0x28, 0x22])) }
        #expect(throws: DecodingError.self) { try JSON(data: Data([0x22, 0x5C, 0x6E, 0xFF, 0x22])) }
    }

    @Test func nestingIsLimited() throws {
        let limit = JSONParser.maximumDepth
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(throws: Never.self) { try Self.parse(deepest) }
        let tooDeep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(throws: DecodingError.self) { try Self.parse(tooDeep) }
        #expect(throws: DecodingError.self) { try Self.parse(String(repeating: "{\"a\":", count: 100_000)) }
    }

    @Test func theErrorSaysWhereAndWhat() {
        do {
            _ = try Self.parse("[1, 2, x]")
            Issue.record("no error")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("at byte 7"))
            #expect(context.debugDescription.contains("unexpected character"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// Random documents written by `JSONSerialization` read back to the same values.
    @Test func agreesWithJSONSerialization() throws {
        var random = SeededGenerator(seed: 0x4A53_4F4E)
        func value(_ depth: Int) -> Any {
            switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &random) {
            case 0: return NSNull()
            case 1: return Bool.random(using: &random)
            case 2: return Int64.random(in: .min ... .max, using: &random)
            case 3: return Double.random(in: -1e6...1e6, using: &random)
            case 4:
                let scalars = (0..<Int.random(in: 0..<12, using: &random)).compactMap { _ in
                    Unicode.Scalar(UInt32.random(in: 1...0x1_FFFF, using: &random))
                }
                return String(String.UnicodeScalarView(scalars))
            case 5: return (0..<Int.random(in: 0..<5, using: &random)).map { _ in value(depth + 1) }
            default:
                var object: [String: Any] = [:]
                for index in 0..<Int.random(in: 0..<5, using: &random) { object["k\(index)"] = value(depth + 1) }
                return object
            }
        }
        func same(_ json: JSON, _ any: Any) -> Bool {
            switch (json, any) {
            case (.null, is NSNull): return true
            case (.string(let a), let b as String): return a == b
            case (.array(let a), let b as [Any]): return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
            case (.object(let a), let b as [String: Any]):
                return a.count == b.count && b.allSatisfy { key, value in a[key].map { same($0, value) } ?? false }
            case (.bool(let a), let b as Bool): return a == b
            case (.integer(let a), let b as Int64): return a == b
            case (.number(let a), let b as Double): return a == b
            case (.integer(let a), let b as Double): return Double(a) == b
            default: return false
            }
        }
        for _ in 0..<300 {
            let document = [value(0)]
            let data = try JSONSerialization.data(withJSONObject: document)
            let parsed = try JSON(data: data)
            #expect(same(parsed, document), "\(String(decoding: data, as: UTF8.self))")
        }
    }
}

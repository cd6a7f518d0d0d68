import Foundation
import Testing

@testable import Courier

@Suite struct JSONValueTests {
    private struct Model: Codable, Equatable {
        var id: Int
        var title: String
        var score: Double
        var active: Bool
        var tags: [String]
        var parent: Int?
    }

    private static let sample: JSON = [
        "id": 1, "title": "Hello", "score": 9.5, "active": true, "tags": ["a", "b"], "parent": nil,
    ]

    // MARK: Literals

    @Test func literals() {
        #expect(JSON.null == nil)
        #expect(JSON.bool(true) == true)
        #expect(JSON.number(3) == 3)
        #expect(JSON.number(2.5) == 2.5)
        #expect(JSON.string("s") == "s")
        #expect(JSON.array([.number(1), .string("x")]) == [1, "x"])
        #expect(JSON.object(["k": .null]) == ["k": nil])
        #expect(JSON.array([]) == [])
        #expect(JSON.object([:]) == [:])
    }

    @Test func duplicateLiteralKeysKeepTheLastValue() {
        let json: JSON = ["k": 1, "k": 2]
        #expect(json == ["k": 2])
        #expect(json.objectValue?.count == 1)
    }

    // MARK: Parsing

    @Test func parsesTopLevelValues() throws {
        #expect(try JSON(data: Data("null".utf8)) == .null)
        #expect(try JSON(data: Data("true".utf8)) == .bool(true))
        #expect(try JSON(data: Data("false".utf8)) == .bool(false))
        #expect(try JSON(data: Data("-12.5e1".utf8)) == .number(-125))
        #expect(try JSON(data: Data(#""s""#.utf8)) == .string("s"))
        #expect(try JSON(data: Data("[]".utf8)) == .array([]))
        #expect(try JSON(data: Data("{}".utf8)) == .object([:]))
    }

    @Test func booleansAndNumbersStayDistinct() throws {
        let json = try JSON(data: Data(#"[true,1,0,false,"true","1"]"#.utf8))
        #expect(json == .array([.bool(true), .number(1), .number(0), .bool(false), .string("true"), .string("1")]))
    }

    @Test func parsesStringEscapes() throws {
        let json = try JSON(data: Data(#"["a\"b\\c\/d\n\t","\u00e9\u4e2d","\ud83d\ude00"]"#.utf8))
        #expect(json == ["a\"b\\c/d\n\t", "é中", "😀"])
    }

    @Test(arguments: ["", "{", "[1 2]", "{\"a\":}", "tru", "'s'", "{a:1}", "NaN", "[1]x"])
    func malformedInputThrowsDecodingError(text: String) {
        #expect(throws: DecodingError.self) { try JSON(data: Data(text.utf8)) }
    }

    @Test func largeIntegersAreDoubles() throws {
        let json = try JSON(data: Data("[9007199254740993, 1e300]".utf8))
        #expect(json[0]?.doubleValue == 9_007_199_254_740_992)
        #expect(json[1]?.doubleValue == 1e300)
        #expect(json[1]?.intValue == nil)
    }

    // MARK: Subscripts and accessors

    @Test func subscripts() {
        let json: JSON = ["user": ["name": "Ada", "tags": ["x", "y"]], "list": [10, 20]]
        #expect(json["user"]?["name"] == "Ada")
        #expect(json["user"]?["tags"]?[1] == "y")
        #expect(json["list"]?[0] == 10)
        #expect(json["missing"] == nil)
        #expect(json["list"]?[2] == nil)
        #expect(json["list"]?[-1] == nil)
        #expect(json[0] == nil)
        #expect(json["list"]?["key"] == nil)
        #expect(JSON.string("s")["key"] == nil)
        #expect(JSON.string("s")[0] == nil)
    }

    @Test func nullMemberIsPresentButNull() {
        let json: JSON = ["a": nil]
        #expect(json["a"] == .null)
        #expect(json["a"]?.isNull == true)
        #expect(json["b"] == nil)
    }

    @Test func typedAccessors() {
        #expect(JSON.string("s").stringValue == "s")
        #expect(JSON.number(1).stringValue == nil)
        #expect(JSON.number(1.5).doubleValue == 1.5)
        #expect(JSON.string("1.5").doubleValue == nil)
        #expect(JSON.number(42).intValue == 42)
        #expect(JSON.number(-7).intValue == -7)
        #expect(JSON.number(1.5).intValue == nil)
        #expect(JSON.number(1e30).intValue == nil)
        #expect(JSON.bool(true).intValue == nil)
        #expect(JSON.bool(false).boolValue == false)
        #expect(JSON.number(1).boolValue == nil)
        #expect(JSON.array([1]).arrayValue == [1])
        #expect(JSON.object([:]).arrayValue == nil)
        #expect(JSON.object(["a": 1]).objectValue == ["a": 1])
        #expect(JSON.array([]).objectValue == nil)
        #expect(JSON.null.isNull)
        #expect(!JSON.bool(false).isNull)
        #expect(!JSON.number(0).isNull)
    }

    // MARK: Codable

    @Test func codableRoundTrip() throws {
        let json: JSON = [
            "n": nil, "b": false, "i": 42, "d": -0.125, "s": "✉️ 中文", "a": [1, [2, [3]], ["k": "v"]], "o": ["x": [:]],
        ]
        let data = try JSONEncoder().encode(json)
        #expect(try JSON(data: data) == json)
        #expect(try JSONDecoder().decode(JSON.self, from: data) == json)
    }

    @Test func encodesAsPlainJSON() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json: JSON = ["b": [true, nil], "a": "x", "c": 3]
        let data = try encoder.encode(json)
        #expect(String(decoding: data, as: UTF8.self) == #"{"a":"x","b":[true,null],"c":3}"#)
    }

    @Test func embedsInOtherCodableTypes() throws {
        struct Envelope: Codable, Equatable {
            var kind: String
            var payload: JSON
        }
        let envelope = Envelope(kind: "k", payload: ["nested": [1, "two", nil]])
        let decoded = try JSONDecoder().decode(Envelope.self, from: JSONEncoder().encode(envelope))
        #expect(decoded == envelope)
    }

    // MARK: removingNullValues

    @Test func removingNullValues() {
        let json: JSON = [
            "a": nil, "b": 1, "c": ["d": nil, "e": [nil, 2, ["f": nil, "g": [nil]]]], "h": [[nil], nil],
        ]
        #expect(json.removingNullValues() == ["b": 1, "c": ["e": [2, ["g": []]]], "h": [[]]])
    }

    @Test func removingNullValuesLeavesScalarsAndNullAlone() {
        #expect(JSON.null.removingNullValues() == .null)
        #expect(JSON.number(1).removingNullValues() == 1)
        #expect(JSON.string("null").removingNullValues() == "null")
        #expect(JSON.array([nil, nil]).removingNullValues() == [])
    }

    // MARK: decode

    @Test func decodesModels() throws {
        let model = try Self.sample.decode(Model.self)
        #expect(model == Model(id: 1, title: "Hello", score: 9.5, active: true, tags: ["a", "b"], parent: nil))
        let inferred: Model = try Self.sample.decode()
        #expect(inferred.id == 1)
        #expect(try JSON.array([1, 2]).decode([Int].self) == [1, 2])
        #expect(try JSON.string("x").decode(String.self) == "x")
    }

    @Test func decodesWithACustomDecoder() throws {
        struct Snake: Decodable, Equatable {
            var firstName: String
            var lastSeen: Date
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .secondsSince1970
        let json: JSON = ["first_name": "Ada", "last_seen": 100]
        #expect(
            try json.decode(Snake.self, decoder: decoder)
                == Snake(firstName: "Ada", lastSeen: Date(timeIntervalSince1970: 100)))
        #expect(throws: DecodingError.self) { try json.decode(Snake.self) }
    }

    @Test func decodingAMismatchThrows() {
        #expect(throws: DecodingError.self) { try JSON.string("x").decode(Int.self) }
        #expect(throws: DecodingError.self) { try JSON.number(1.5).decode(Int.self) }
        #expect(throws: DecodingError.self) { try JSON.object(["id": "1"]).decode(Model.self) }
    }

    // MARK: Hashable

    @Test func hashable() {
        let set: Set<JSON> = [1, 1, "1", true, nil, nil, [1], [1], ["a": 1], ["a": 1], ["a": 2]]
        #expect(set.count == 7)
        #expect(set.contains(["a": 2]))
        var dictionary: [JSON: String] = [:]
        dictionary[["k": [1, 2]]] = "v"
        #expect(dictionary[["k": [1, 2]]] == "v")
        #expect(dictionary[["k": [2, 1]]] == nil)
        #expect(JSON.number(1) != JSON.bool(true))
        #expect(JSON.number(1) != JSON.string("1"))
    }
}

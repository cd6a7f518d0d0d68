import Foundation
import Testing

@testable import Courier

@Suite struct PropertyListValueTests {
    private func plist(_ body: String) throws -> PropertyList {
        let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">\(body)</plist>
            """
        return try PropertyList(data: Data(document.utf8))
    }

    @Test func strings() throws {
        #expect(try plist("<string>hello</string>") == .string("hello"))
        #expect(try plist("<string></string>") == .string(""))
        #expect(try plist("<string>a &amp; b &lt;c&gt;</string>") == .string("a & b <c>"))
        #expect(try plist("<string>✉️ 中文</string>") == .string("✉️ 中文"))
    }

    @Test func stringsThatLookLikeOtherTypesStayStrings() throws {
        #expect(try plist("<string>123</string>") == .string("123"))
        #expect(try plist("<string>1.5</string>") == .string("1.5"))
        #expect(try plist("<string>true</string>") == .string("true"))
        #expect(try plist("<string>2001-01-01T00:00:00Z</string>") == .string("2001-01-01T00:00:00Z"))
        #expect(try plist("<string>AAEC</string>") == .string("AAEC"))
    }

    @Test func integers() throws {
        #expect(try plist("<integer>0</integer>") == .integer(0))
        #expect(try plist("<integer>1</integer>") == .integer(1))
        #expect(try plist("<integer>-5</integer>") == .integer(-5))
        #expect(try plist("<integer>9223372036854775807</integer>") == .integer(Int.max))
    }

    @Test func reals() throws {
        #expect(try plist("<real>2.5</real>") == .real(2.5))
        #expect(try plist("<real>-0.125</real>") == .real(-0.125))
        #expect(try plist("<real>2.0</real>") == .integer(2))
    }

    @Test func booleans() throws {
        #expect(try plist("<true/>") == .bool(true))
        #expect(try plist("<false/>") == .bool(false))
    }

    @Test func dates() throws {
        #expect(try plist("<date>2001-01-01T00:00:00Z</date>") == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(try plist("<date>1970-01-01T00:01:40Z</date>") == .date(Date(timeIntervalSince1970: 100)))
    }

    @Test func data() throws {
        #expect(try plist("<data>AAEC/w==</data>") == .data(Data([0, 1, 2, 255])))
        #expect(try plist("<data></data>") == .data(Data()))
    }

    @Test func arraysAndDictionaries() throws {
        #expect(try plist("<array/>") == .array([]))
        #expect(try plist("<dict/>") == .dictionary([:]))
        #expect(
            try plist("<array><integer>1</integer><string>x</string><true/></array>")
                == .array([.integer(1), .string("x"), .bool(true)]))
        let nested = try plist(
            "<dict><key>list</key><array><dict><key>k</key><real>0.5</real></dict></array><key>e</key><dict/></dict>")
        #expect(nested == .dictionary(["list": .array([.dictionary(["k": .real(0.5)])]), "e": .dictionary([:])]))
    }

    @Test func subscripts() throws {
        let value = PropertyList.dictionary(["a": .array([.string("x"), .integer(2)])])
        #expect(value["a"]?[0] == .string("x"))
        #expect(value["a"]?[1] == .integer(2))
        #expect(value["a"]?[2] == nil)
        #expect(value["a"]?[-1] == nil)
        #expect(value["b"] == nil)
        #expect(value[0] == nil)
        #expect(PropertyList.string("s")["a"] == nil)
    }

    private static let everything = PropertyList.dictionary([
        "string": .string("s ✉️"), "integer": .integer(-42), "real": .real(3.25), "true": .bool(true),
        "false": .bool(false), "date": .date(Date(timeIntervalSinceReferenceDate: 12345)),
        "data": .data(Data([0, 255, 7])), "array": .array([.integer(1), .array([]), .dictionary([:])]),
        "dictionary": .dictionary(["nested": .string("n")]),
    ])

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func codableRoundTrip(format: PropertyListSerialization.PropertyListFormat) throws {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format
        let data = try encoder.encode(Self.everything)
        #expect(try PropertyList(data: data) == Self.everything)
        #expect(try PropertyListDecoder().decode(PropertyList.self, from: data) == Self.everything)
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func parsesPropertyListSerializationOutput(format: PropertyListSerialization.PropertyListFormat) throws {
        let object: [String: Any] = [
            "s": "text", "i": 7, "d": 1.5, "b": true, "date": Date(timeIntervalSinceReferenceDate: 60),
            "data": Data([9]), "a": ["x", 1],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0)
        #expect(
            try PropertyList(data: data)
                == .dictionary([
                    "s": .string("text"), "i": .integer(7), "d": .real(1.5), "b": .bool(true),
                    "date": .date(Date(timeIntervalSinceReferenceDate: 60)), "data": .data(Data([9])),
                    "a": .array([.string("x"), .integer(1)]),
                ]))
    }

    @Test(arguments: ["<plist><dict><key>a</key></plist>", "{ unterminated", "<plist><integer>x</integer></plist>", ""])
    func malformedInputThrows(text: String) {
        #expect(throws: DecodingError.self) { try PropertyList(data: Data(text.utf8)) }
    }

    @Test func hashable() {
        let set: Set<PropertyList> = [
            .integer(1), .integer(1), .real(1.5), .bool(true), .string("1"), .data(Data([1])),
        ]
        #expect(set.count == 5)
        #expect(PropertyList.integer(1) != .bool(true))
        #expect(PropertyList.integer(1) != .real(1.5))
    }
}

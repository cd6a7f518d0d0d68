import Foundation
import Testing

@testable import Courier

@Suite struct ParameterTests {
    @Test func literalsBuildTheMatchingCases() {
        let parameters: Parameter = [
            "name": "bang", "phone": ["mobile": "xx"], "tags": ["a", "b"], "n": 1, "x": 1.5,
            "ok": true, "none": nil,
        ]
        #expect(
            parameters
                == .dictionary([
                    "name": .string("bang"), "phone": .dictionary(["mobile": .string("xx")]),
                    "tags": .array([.string("a"), .string("b")]), "n": .int(1), "x": .double(1.5), "ok": .bool(true),
                    "none": .null,
                ]))
    }

    @Test func interpolationMakesAString() {
        let id = 7
        let parameter: Parameter = "user-\(id)"
        #expect(parameter == .string("user-7"))
    }

    @Test func duplicateDictionaryLiteralKeysKeepTheLastValue() {
        let parameters: Parameter = ["a": 1, "a": 2]
        #expect(parameters == .dictionary(["a": .int(2)]))
    }

    @Test func isLeaf() {
        #expect(Parameter.string("x").isLeaf)
        #expect(Parameter.null.isLeaf)
        #expect(!Parameter.array([]).isLeaf)
        #expect(!Parameter.set([]).isLeaf)
        #expect(!Parameter.dictionary([:]).isLeaf)
    }

    @Test func leafStringOfContainersAndNullIsNil() {
        #expect(Parameter.null.leafString() == nil)
        #expect(Parameter.array(["a"]).leafString() == nil)
    }

    @Test func invalidUTF8DataRendersWithReplacementCharacters() {
        #expect(Parameter.data(Data([0x61, 0xFF])).leafString() == "a\u{FFFD}")
    }

    @Test func encodesAsJSONWithSetsSorted() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(Parameter.dictionary(["s": .set(["b", "a"]), "n": .null, "i": 1]))
        #expect(String(decoding: data, as: UTF8.self) == #"{"i":1,"n":null,"s":["a","b"]}"#)
    }
}

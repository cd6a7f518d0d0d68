import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct JSONResponseSerializerTests {
    private typealias F = ResponseFixtures

    private func json(_ text: String, status: Int = 200, contentType: String? = "application/json") throws -> JSON? {
        try JSONResponseSerializer().serialize(
            response: F.response(status, contentType: contentType), data: F.data(text))
    }

    @Test func defaults() {
        let serializer = JSONResponseSerializer()
        #expect(serializer.acceptableContentTypes == ["application/json", "text/json", "text/javascript"])
        #expect(JSONResponseSerializer.jsonContentTypes == ["application/json", "text/json", "text/javascript"])
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
        #expect(serializer.removesKeysWithNullValues == false)
    }

    @Test(arguments: [
        "application/json", "text/json", "text/javascript", "application/json; charset=utf-8", "Text/JSON",
    ])
    func acceptsJSONContentTypes(contentType: String) throws {
        let result = try json(#"{"key":"value"}"#, contentType: contentType)
        #expect(result == ["key": "value"])
    }

    @Test func parsesObjectsArraysAndScalars() throws {
        #expect(
            try json(#"{"a":1,"b":[true,false,null],"c":{"d":"e"},"f":1.5}"#)
                == ["a": 1, "b": [true, false, nil], "c": ["d": "e"], "f": 1.5])
        #expect(try json("[1,2,3]") == [1, 2, 3])
        #expect(try json("42") == 42)
        #expect(try json(#""text""#) == "text")
        #expect(try json("true") == true)
        #expect(try json("null") == JSON.null)
    }

    @Test func nilResponseParsesWithoutValidation() throws {
        let result = try JSONResponseSerializer().serialize(response: nil, data: F.data(#"{"a":1}"#))
        #expect(result == ["a": 1])
    }

    @Test func emptyBodyGivesNilWithoutError() throws {
        let serializer = JSONResponseSerializer()
        #expect(try serializer.serialize(response: F.response(contentType: "application/json"), data: Data()) == nil)
        #expect(try serializer.serialize(response: F.response(contentType: "application/json"), data: nil) == nil)
        #expect(try serializer.serialize(response: F.response(204), data: nil) == nil)
        #expect(try serializer.serialize(response: nil, data: nil) == nil)
    }

    @Test func singleSpaceBodyGivesNilWithoutError() throws {
        #expect(try json(" ") == nil)
    }

    @Test func twoSpacesAreNotAnEmptyBody() throws {
        let error = try #require(throws: CourierError.self) { try json("  ") }
        #expect(error.errorCode == -1016)
    }

    @Test func emptyBodyWithUnacceptableContentTypeGivesNil() throws {
        let result = try JSONResponseSerializer().serialize(
            response: F.response(contentType: "text/html"), data: Data())
        #expect(result == nil)
    }

    @Test func emptyBodyUnderErrorStatusThrowsStatusError() throws {
        let error = try #require(throws: CourierError.self) {
            try JSONResponseSerializer().serialize(
                response: F.response(500, contentType: "application/json"), data: nil)
        }
        #expect(error.errorCode == -1011)
        #expect(error.serializedObject == nil)
        #expect(error.underlyingError == nil)
    }

    @Test func errorStatusWithJSONBodyCarriesParsedBodyAndData() throws {
        let data = F.data(#"{"error":"boom","code":17}"#)
        let response = F.response(500, contentType: "application/json")
        let error = try #require(throws: CourierError.self) {
            try JSONResponseSerializer().serialize(response: response, data: data)
        }
        guard case .unacceptableStatusCode(500, _, nil) = error else {
            Issue.record("expected a bare status error, got \(error)")
            return
        }
        #expect(error.errorCode == -1011)
        #expect(error.errorDescription == "Request failed: internal server error (500)")
        #expect(error.serializedObject as? JSON == ["error": "boom", "code": 17])
        #expect(error.responseData == data)
        #expect(error.response === response)
    }

    @Test func errorStatusBodyHonoursRemovesKeysWithNullValues() throws {
        let serializer = JSONResponseSerializer(removesKeysWithNullValues: true)
        let error = try #require(throws: CourierError.self) {
            try serializer.serialize(
                response: F.response(422, contentType: "application/json"), data: F.data(#"{"a":null,"b":1}"#))
        }
        #expect(error.serializedObject as? JSON == ["b": 1])
    }

    @Test func malformedJSONIsASerializationError() throws {
        let data = F.data(#"{"a":"#)
        let response = F.response(contentType: "application/json")
        let error = try #require(throws: CourierError.self) {
            try JSONResponseSerializer().serialize(response: response, data: data)
        }
        guard case .responseSerializationFailed(let reason, let context, let underlying) = error else {
            Issue.record("expected responseSerializationFailed, got \(error)")
            return
        }
        #expect(error.errorCode == -1016)
        #expect(reason == "The data couldn’t be read because it isn’t in the correct format.")
        #expect(error.errorDescription == reason)
        #expect(underlying is DecodingError)
        #expect(context.data == data)
        #expect(context.response === response)
        #expect(error.serializedObject == nil)
    }

    @Test(arguments: ["{", "[1, 2", "nul", "{'a': 1}", "NaN", #"{"a" 1}"#, "abc", "\u{FEFF}{]"])
    func malformedBodiesThrow(body: String) throws {
        let error = try #require(throws: CourierError.self) { try json(body) }
        #expect(error.errorCode == -1016)
        #expect(error.underlyingError is DecodingError)
    }

    @Test func malformedJSONUnderErrorStatusIsStatusErrorWithParseErrorUnderneath() throws {
        let data = F.data("<html>Internal Server Error</html>")
        let error = try #require(throws: CourierError.self) {
            try JSONResponseSerializer().serialize(
                response: F.response(500, contentType: "application/json"), data: data)
        }
        guard case .unacceptableStatusCode(500, _, let underlying?) = error else {
            Issue.record("expected a status error with an underlying error, got \(error)")
            return
        }
        let parseError = try #require(underlying as? CourierError)
        guard case .responseSerializationFailed = parseError else {
            Issue.record("expected responseSerializationFailed underneath, got \(parseError)")
            return
        }
        #expect(parseError.errorCode == -1016)
        #expect(parseError.underlyingError is DecodingError)
        #expect(error.responseData == data)
        #expect(error.serializedObject == nil)
        #expect(error.contains(code: -1016))
    }

    @Test func unacceptableContentTypeIsThrownWithoutParsing() throws {
        let data = F.data(#"{"valid":"json"}"#)
        let error = try #require(throws: CourierError.self) { try json(#"{"valid":"json"}"#, contentType: "text/html") }
        guard case .unacceptableContentType("text/html", _, _) = error else {
            Issue.record("expected unacceptableContentType, got \(error)")
            return
        }
        #expect(error.errorCode == -1016)
        #expect(error.serializedObject == nil)
        #expect(error.responseData == data)
        #expect(error.errorDescription == "Request failed: unacceptable content-type: text/html")
    }

    @Test func missingContentTypeWithBodyIsRejected() throws {
        let error = try #require(throws: CourierError.self) { try json("{}", contentType: nil) }
        #expect(error.errorDescription == "Request failed: unacceptable content-type: (null)")
    }

    @Test func unacceptableContentTypeUnderErrorStatusIsNotParsed() throws {
        let error = try #require(throws: CourierError.self) {
            try json(#"{"a":1}"#, status: 404, contentType: "text/html")
        }
        #expect(error.errorCode == -1011)
        #expect(error.serializedObject == nil)
        let underlying = try #require(error.underlyingError as? CourierError)
        guard case .unacceptableContentType("text/html", _, _) = underlying else {
            Issue.record("expected unacceptableContentType underneath, got \(underlying)")
            return
        }
    }

    @Test func nilAcceptableSetsDisableValidation() throws {
        let serializer = JSONResponseSerializer(acceptableStatusCodes: nil, acceptableContentTypes: nil)
        let result = try serializer.serialize(response: F.response(500, contentType: "text/html"), data: F.data("[1]"))
        #expect(result == [1])
    }

    @Test func customContentTypes() throws {
        let serializer = JSONResponseSerializer(acceptableContentTypes: ["application/vnd.api+json"])
        let ok = try serializer.serialize(
            response: F.response(contentType: "application/vnd.api+json"), data: F.data("1"))
        #expect(ok == 1)
        #expect(throws: CourierError.self) {
            try serializer.serialize(response: F.response(contentType: "application/json"), data: F.data("1"))
        }
    }

    // MARK: removesKeysWithNullValues

    @Test func nullsAreKeptByDefault() throws {
        #expect(try json(#"{"a":null,"b":[null]}"#) == ["a": nil, "b": [nil]])
    }

    @Test func removesNullMembersAndArrayElementsRecursively() throws {
        let body = #"""
            {"keep":1,"drop":null,"nested":{"x":null,"y":"z","deeper":{"n":null}},
             "list":[1,null,{"p":null,"q":[null,{"r":null,"s":2}]},[null,[null,3]]],
             "objects":[{"id":1,"name":null},{"id":2,"name":"two"}]}
            """#
        let serializer = JSONResponseSerializer(removesKeysWithNullValues: true)
        let result = try serializer.serialize(response: F.response(contentType: "application/json"), data: F.data(body))
        let expected: JSON = [
            "keep": 1,
            "nested": ["y": "z", "deeper": [:]],
            "list": [1, ["q": [["s": 2]]], [[3]]],
            "objects": [["id": 1], ["id": 2, "name": "two"]],
        ]
        #expect(result == expected)
        #expect(result?["drop"] == nil)
        #expect(result?["objects"]?[0]?["name"] == nil)
    }

    @Test func removingNullsKeepsTopLevelNull() throws {
        let serializer = JSONResponseSerializer(removesKeysWithNullValues: true)
        #expect(try serializer.serialize(response: nil, data: F.data("null")) == JSON.null)
        #expect(try serializer.serialize(response: nil, data: F.data("[null,null]")) == [])
    }

    // MARK: Content

    @Test func unicodeContent() throws {
        let cjk = String(repeating: "中文字符测试日本語한국어", count: 6)
        #expect(cjk.count > 50)
        let body = #"{"emoji":"😀👍🏽🇫🇷👨‍👩‍👧","cjk":"\#(cjk)","escaped":"\u00e9\ud83d\ude00"}"#
        let result = try json(body, contentType: "application/json; charset=utf-8")
        #expect(result?["emoji"]?.stringValue == "😀👍🏽🇫🇷👨‍👩‍👧")
        #expect(result?["cjk"]?.stringValue == cjk)
        #expect(result?["escaped"]?.stringValue == "é😀")
    }

    @Test func unicodeKeys() throws {
        let result = try json(#"{"ключ":"значение","🔑":"🚪"}"#)
        #expect(result == ["ключ": "значение", "🔑": "🚪"])
    }

    @Test func deeplyNestedDocument() throws {
        let depth = 200
        let body = String(repeating: #"{"a":["#, count: depth) + "1" + String(repeating: "]}", count: depth)
        var node = try #require(try json(body))
        for _ in 0..<depth {
            node = try #require(node["a"]?[0])
        }
        #expect(node == 1)
    }

    @Test func largeArray() throws {
        let body = "[" + (0..<5000).map(String.init).joined(separator: ",") + "]"
        let result = try #require(try json(body))
        #expect(result.arrayValue?.count == 5000)
        #expect(result[4999] == 4999)
    }
}

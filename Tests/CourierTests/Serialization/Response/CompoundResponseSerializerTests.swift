import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct CompoundResponseSerializerTests {
    private typealias F = ResponseFixtures

    private let jsonThenString = CompoundResponseSerializer(serializers: [
        JSONResponseSerializer(), StringResponseSerializer(),
    ])

    @Test func defaults() {
        let compound = CompoundResponseSerializer(serializers: [])
        #expect(compound.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
        #expect(compound.acceptableContentTypes == nil)
        #expect(compound.serializers.isEmpty)
        #expect(jsonThenString.serializers.count == 2)
    }

    @Test func firstSuccessfulSerializerWins() throws {
        let result = try jsonThenString.serialize(
            response: F.response(contentType: "application/json"), data: F.data(#"{"a":1}"#))
        #expect(result as? JSON == ["a": 1])
        #expect(!(result is String))
    }

    @Test func laterSerializerIsUsedWhenEarlierOneRejectsTheContentType() throws {
        let result = try jsonThenString.serialize(
            response: F.response(contentType: "text/plain"), data: F.data("hello"))
        #expect(result as? String == "hello")
        #expect(result as? JSON == nil)
    }

    @Test func laterSerializerIsUsedWhenEarlierOneFailsToParse() throws {
        let result = try jsonThenString.serialize(
            response: F.response(contentType: "application/json"), data: F.data("{oops"))
        #expect(result as? String == "{oops")
    }

    @Test func orderMatters() throws {
        let stringFirst = CompoundResponseSerializer(serializers: [
            StringResponseSerializer(), JSONResponseSerializer(),
        ])
        let result = try stringFirst.serialize(
            response: F.response(contentType: "application/json"), data: F.data("[1]"))
        #expect(result as? String == "[1]")
    }

    @Test func nilResultIsNotASuccess() throws {
        let result = try jsonThenString.serialize(response: F.response(contentType: "application/json"), data: Data())
        #expect(result as? String == "")
    }

    @Test func fallsBackToRawDataWhenNoSerializerSucceeds() throws {
        let compound = CompoundResponseSerializer(serializers: [
            JSONResponseSerializer(), XMLParserResponseSerializer(),
        ])
        let data = F.data("plain text")
        let result = try compound.serialize(response: F.response(contentType: "text/plain"), data: data)
        #expect(result as? Data == data)
    }

    @Test func fallsBackToRawDataWhenEverySerializerGivesNil() throws {
        let compound = CompoundResponseSerializer(serializers: [JSONResponseSerializer()])
        let result = try compound.serialize(response: F.response(contentType: "application/json"), data: F.data(" "))
        #expect(result as? Data == F.data(" "))
        #expect(try compound.serialize(response: F.response(contentType: "application/json"), data: nil) == nil)
    }

    @Test func emptyCompoundReturnsValidatedData() throws {
        let data = Data([1, 2, 3])
        #expect(
            try CompoundResponseSerializer(serializers: []).serialize(response: F.response(), data: data) as? Data
                == data)
        #expect(throws: CourierError.self) {
            try CompoundResponseSerializer(serializers: []).serialize(response: F.response(404), data: data)
        }
    }

    @Test func fallbackValidatesContentTypes() throws {
        let compound = CompoundResponseSerializer(
            serializers: [JSONResponseSerializer()], acceptableContentTypes: ["application/json"])
        let error = try #require(throws: CourierError.self) {
            try compound.serialize(response: F.response(contentType: "text/plain"), data: F.data("x"))
        }
        guard case .unacceptableContentType("text/plain", _, _) = error else {
            Issue.record("expected unacceptableContentType, got \(error)")
            return
        }
    }

    @Test func statusFailureHasLastComponentErrorUnderneath() throws {
        let compound = CompoundResponseSerializer(serializers: [
            StringResponseSerializer(encoding: .utf8), XMLParserResponseSerializer(),
        ])
        let data = F.data(#"{"error":"x"}"#)
        let response = F.response(500, contentType: "application/json")
        let error = try #require(throws: CourierError.self) { try compound.serialize(response: response, data: data) }
        guard case .unacceptableStatusCode(500, let context, let underlying?) = error else {
            Issue.record("expected a status error with an underlying error, got \(error)")
            return
        }
        #expect(context.response === response)
        #expect(context.data == data)
        // The last component is the XML serializer, which refuses application/json under the 500.
        let last = try #require(underlying as? CourierError)
        guard case .unacceptableStatusCode(500, _, let xmlUnderlying?) = last else {
            Issue.record("expected the XML serializer's status error, got \(last)")
            return
        }
        guard case .unacceptableContentType("application/json", let acceptable, _) = xmlUnderlying as? CourierError
        else {
            Issue.record("expected the XML serializer's content-type error, got \(xmlUnderlying)")
            return
        }
        #expect(acceptable == XMLParserResponseSerializer.xmlContentTypes)
    }

    @Test func statusFailureWhenComponentsAcceptTheStatusCode() throws {
        let compound = CompoundResponseSerializer(serializers: [
            JSONResponseSerializer(acceptableStatusCodes: nil)
        ])
        let result = try compound.serialize(
            response: F.response(500, contentType: "application/json"), data: F.data("[2]"))
        #expect(result as? JSON == [2])
    }

    @Test func compoundStatusCodesOnlyApplyToTheFallback() throws {
        let compound = CompoundResponseSerializer(
            serializers: [JSONResponseSerializer()], acceptableStatusCodes: IndexSet(integersIn: 200..<600))
        let data = F.data("not json")
        let result = try compound.serialize(response: F.response(500, contentType: "text/plain"), data: data)
        #expect(result as? Data == data)
    }

    @Test func nestedCompound() throws {
        let inner = CompoundResponseSerializer(serializers: [XMLParserResponseSerializer()])
        let outer = CompoundResponseSerializer(serializers: [JSONResponseSerializer(), inner])
        let result = try outer.serialize(response: F.response(contentType: "text/xml"), data: F.data("<r/>"))
        #expect(result as? XML == XML(name: "r"))
    }

    @Test func nilResponseUsesTheFirstSerializer() throws {
        let result = try jsonThenString.serialize(response: nil, data: F.data("true"))
        #expect(result as? JSON == true)
    }
}

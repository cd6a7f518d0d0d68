import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct DecodableResponseSerializerTests {
    private typealias F = ResponseFixtures

    private struct User: Codable, Sendable, Equatable {
        var id: Int
        var name: String
        var tags: [String]?
    }

    private struct APIError: Codable, Sendable, Equatable {
        var message: String
    }

    private struct Profile: Codable, Sendable, Equatable {
        var userId: Int
        var displayName: String
        var createdAt: Date
    }

    @Test func defaults() {
        let serializer = DecodableResponseSerializer(User.self)
        #expect(serializer.acceptableContentTypes == JSONResponseSerializer.jsonContentTypes)
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
        #expect(serializer.decoder is JSONDecoder)
    }

    @Test func decodesAModel() throws {
        let data = F.data(#"{"id":7,"name":"Ada","tags":["x","y"]}"#)
        let user = try DecodableResponseSerializer(User.self)
            .serialize(response: F.response(contentType: "application/json; charset=utf-8"), data: data)
        #expect(user == User(id: 7, name: "Ada", tags: ["x", "y"]))
    }

    @Test func decodesArraysAndScalars() throws {
        let users = try DecodableResponseSerializer([User].self)
            .serialize(
                response: F.response(contentType: "text/json"),
                data: F.data(#"[{"id":1,"name":"a"},{"id":2,"name":"b"}]"#))
        #expect(users.map(\.id) == [1, 2])
        let number = try DecodableResponseSerializer(Int.self).serialize(response: nil, data: F.data("42"))
        #expect(number == 42)
    }

    @Test func decodesWithUnicode() throws {
        let name = String(repeating: "名前😀", count: 30)
        let user = try DecodableResponseSerializer(User.self)
            .serialize(response: nil, data: F.data(#"{"id":1,"name":"\#(name)"}"#))
        #expect(user.name == name)
    }

    @Test func statusErrorCarriesTheDecodedModel() throws {
        let data = F.data(#"{"message":"nope"}"#)
        let error = try #require(throws: CourierError.self) {
            try DecodableResponseSerializer(APIError.self).serialize(
                response: F.response(422, contentType: "application/json"), data: data)
        }
        #expect(error.errorCode == -1011)
        #expect(error.serializedObject as? APIError == APIError(message: "nope"))
        #expect(error.responseData == data)
        #expect(error.underlyingError == nil)
    }

    @Test func statusErrorWithUndecodableBodyHasDecodingErrorUnderneath() throws {
        let error = try #require(throws: CourierError.self) {
            try DecodableResponseSerializer(User.self)
                .serialize(response: F.response(500, contentType: "application/json"), data: F.data(#"{"error":"x"}"#))
        }
        #expect(error.errorCode == -1011)
        #expect(error.serializedObject == nil)
        let parseError = try #require(error.underlyingError as? CourierError)
        #expect(parseError.errorCode == -1016)
        #expect(parseError.underlyingError is DecodingError)
    }

    @Test func typeMismatchIsASerializationError() throws {
        let error = try #require(throws: CourierError.self) {
            try DecodableResponseSerializer(User.self)
                .serialize(
                    response: F.response(contentType: "application/json"), data: F.data(#"{"id":"seven","name":"x"}"#))
        }
        guard case .responseSerializationFailed(_, _, let underlying) = error else {
            Issue.record("expected responseSerializationFailed, got \(error)")
            return
        }
        #expect(underlying is DecodingError)
        #expect(error.errorCode == -1016)
    }

    @Test func malformedJSONIsASerializationError() throws {
        let error = try #require(throws: CourierError.self) {
            try DecodableResponseSerializer(User.self).serialize(response: nil, data: F.data("{"))
        }
        #expect(error.errorCode == -1016)
        #expect(error.underlyingError is DecodingError)
    }

    @Test func unacceptableContentTypeIsThrownWithoutDecoding() throws {
        let error = try #require(throws: CourierError.self) {
            try DecodableResponseSerializer(User.self)
                .serialize(response: F.response(contentType: "text/html"), data: F.data(#"{"id":1,"name":"a"}"#))
        }
        guard case .unacceptableContentType("text/html", _, _) = error else {
            Issue.record("expected unacceptableContentType, got \(error)")
            return
        }
    }

    @Test(arguments: [nil, Data(), Data(" ".utf8)])
    func emptyBodyIsAnErrorForOrdinaryTypes(data: Data?) throws {
        let response = F.response(contentType: "application/json")
        let error = try #require(throws: CourierError.self) {
            try DecodableResponseSerializer(User.self).serialize(response: response, data: data)
        }
        guard case .responseSerializationFailed(let reason, let context, nil) = error else {
            Issue.record("expected responseSerializationFailed without an underlying error, got \(error)")
            return
        }
        #expect(error.errorCode == -1016)
        #expect(reason.contains("User"))
        #expect(context.response === response)
    }

    @Test(arguments: [nil, Data(), Data(" ".utf8)])
    func emptyBodyDecodesIntoEmpty(data: Data?) throws {
        let serializer = DecodableResponseSerializer(Empty.self)
        #expect(
            try serializer.serialize(response: F.response(204, contentType: "application/json"), data: data) == Empty())
        #expect(try serializer.serialize(response: nil, data: data) == Empty())
    }

    @Test func emptyAcceptsAnEmptyJSONObject() throws {
        let value = try DecodableResponseSerializer(Empty.self)
            .serialize(response: F.response(contentType: "application/json"), data: F.data("{}"))
        #expect(value == Empty())
        #expect(Empty.emptyValue() == Empty())
    }

    @Test func emptyWithoutContentTypeIsAcceptedOnlyWithoutBody() throws {
        let serializer = DecodableResponseSerializer(Empty.self)
        #expect(try serializer.serialize(response: F.response(204), data: nil) == Empty())
        #expect(try serializer.serialize(response: F.response(204), data: Data()) == Empty())
        let error = try #require(throws: CourierError.self) {
            try serializer.serialize(response: F.response(204), data: F.data(" "))
        }
        #expect(error.errorDescription == "Request failed: unacceptable content-type: (null)")
    }

    @Test func emptyUnderErrorStatusStillThrows() throws {
        let error = try #require(throws: CourierError.self) {
            try DecodableResponseSerializer(Empty.self).serialize(response: F.response(500), data: nil)
        }
        #expect(error.errorCode == -1011)
    }

    @Test func customEmptyResponseType() throws {
        struct Ack: Decodable, Sendable, Equatable, EmptyResponse {
            var ok: Bool
            static func emptyValue() -> Ack { Ack(ok: true) }
        }
        #expect(
            try DecodableResponseSerializer(Ack.self).serialize(response: F.response(204), data: nil) == Ack(ok: true))
        let decoded = try DecodableResponseSerializer(Ack.self)
            .serialize(response: F.response(contentType: "application/json"), data: F.data(#"{"ok":false}"#))
        #expect(decoded == Ack(ok: false))
    }

    @Test func snakeCaseJSONDecoder() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .secondsSince1970
        let data = F.data(#"{"user_id":5,"display_name":"Bo","created_at":86400}"#)
        let profile = try DecodableResponseSerializer(Profile.self, decoder: decoder)
            .serialize(response: F.response(contentType: "application/json"), data: data)
        #expect(profile == Profile(userId: 5, displayName: "Bo", createdAt: Date(timeIntervalSince1970: 86400)))

        #expect(throws: CourierError.self) {
            try DecodableResponseSerializer(Profile.self).serialize(response: nil, data: data)
        }
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func propertyListDecoder(format: PropertyListSerialization.PropertyListFormat) throws {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format
        let user = User(id: 3, name: "Plist", tags: ["a"])
        let data = try encoder.encode(user)
        let serializer = DecodableResponseSerializer(
            User.self, decoder: PropertyListDecoder(), acceptableContentTypes: ["application/x-plist"])
        #expect(try serializer.serialize(response: F.response(contentType: "application/x-plist"), data: data) == user)

        let error = try #require(throws: CourierError.self) {
            try serializer.serialize(response: F.response(contentType: "application/json"), data: data)
        }
        #expect(error.errorCode == -1016)
    }

    @Test func propertyListDecoderRejectsJSONWithDefaultContentTypes() throws {
        let serializer = DecodableResponseSerializer(User.self, decoder: PropertyListDecoder())
        let error = try #require(throws: CourierError.self) {
            try serializer.serialize(
                response: F.response(contentType: "application/json"), data: F.data(#"{"id":1,"name":"x"}"#))
        }
        #expect(error.errorCode == -1016)
        #expect(error.underlyingError is DecodingError)
    }

    @Test func customStatusCodes() throws {
        let serializer = DecodableResponseSerializer(APIError.self, acceptableStatusCodes: [400])
        let value = try serializer.serialize(
            response: F.response(400, contentType: "application/json"), data: F.data(#"{"message":"m"}"#))
        #expect(value == APIError(message: "m"))
        #expect(throws: CourierError.self) {
            try serializer.serialize(
                response: F.response(200, contentType: "application/json"), data: F.data(#"{"message":"m"}"#))
        }
    }
}

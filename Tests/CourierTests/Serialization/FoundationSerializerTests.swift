import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``FoundationJSONResponseSerializer`` and ``FoundationPropertyListResponseSerializer``: AFNetworking's
/// `readingOptions` serializers, whose objects cast to `[String: Any]` as `JSONSerialization`'s do, with
/// AFNetworking's `removesKeysWithNullValues` and its error nesting for a malformed body.
@Suite(.timeLimit(.minutes(1)))
struct FoundationSerializerTests {
    static func head(_ status: Int = 200, type: String = "application/json") throws -> ResponseHead {
        let url = try #require(URL(string: "https://api.example.test/me"))
        return ResponseHead(
            statusCode: status, headers: HTTPHeaderFields([.init(name: "Content-Type", value: type)]), url: url,
            httpVersion: "HTTP/1.1")
    }

    @Test("AF code's casts work: [String: Any], [Any], Int, Bool, String, NSNull, nested objects")
    func castsAsFoundationObjects() throws {
        let body = Data(#"{"id":7,"name":"Ada","admin":false,"tags":["a",null,2],"nested":{"ok":true}}"#.utf8)
        let object: (any Sendable)? = try FoundationJSONResponseSerializer().serialize(head: Self.head(), data: body)
        let dictionary = try #require(object as? [String: Any])
        #expect(dictionary["id"] as? Int == 7)
        #expect(dictionary["name"] as? String == "Ada")
        #expect(dictionary["admin"] as? Bool == false)
        let tags = try #require(dictionary["tags"] as? [Any])
        #expect(tags.count == 3 && tags[1] is NSNull && tags[2] as? Int == 2)
        #expect((dictionary["nested"] as? [String: Any])?["ok"] as? Bool == true)
        // The same bytes JSONSerialization would give back.
        #expect(
            try JSONSerialization.data(withJSONObject: dictionary, options: .sortedKeys)
                == JSONSerialization.data(
                    withJSONObject: JSONSerialization.jsonObject(with: body), options: .sortedKeys))
        let array = try FoundationJSONResponseSerializer().serialize(head: Self.head(), data: Data("[1,2]".utf8))
        #expect(array as? [Int] == [1, 2])
    }

    @Test("readingOptions: a top-level scalar only with .fragmentsAllowed, as JSONSerialization and AFNetworking")
    func fragments() throws {
        let scalar = Data("42".utf8)
        #expect(throws: CourierError.self) {
            _ = try FoundationJSONResponseSerializer().serialize(head: Self.head(), data: scalar)
        }
        let allowed = FoundationJSONResponseSerializer(readingOptions: .fragmentsAllowed)
        #expect(try allowed.serialize(head: Self.head(), data: scalar) as? Int == 42)
        #expect(try allowed.serialize(head: Self.head(), data: Data(" ".utf8)) == nil)
        #expect(try allowed.serialize(head: Self.head(), data: Data()) == nil)
    }

    @Test("removesKeysWithNullValues: null keys go at any depth, arrays keep their nulls (AFNetworking's rule)")
    func removesNullKeys() throws {
        let body = Data(#"{"a":null,"b":{"c":null,"d":1},"e":[null,{"f":null,"g":2}]}"#.utf8)
        let serializer = FoundationJSONResponseSerializer(removesKeysWithNullValues: true)
        let object = try #require(try serializer.serialize(head: Self.head(), data: body) as? [String: Any])
        #expect(object["a"] == nil)
        #expect((object["b"] as? [String: Any]).map { Array($0.keys) } == ["d"])
        let list = try #require(object["e"] as? [Any])
        #expect(list.count == 2 && list[0] is NSNull)
        #expect((list[1] as? [String: Any]).map { Array($0.keys) } == ["g"])
    }

    @Test("A malformed body: AFNetworking's 3840 error, with a status error nested under it when there is one")
    func malformedBodyErrors() throws {
        let broken = Data("{\"a\":".utf8)
        do {
            _ = try FoundationJSONResponseSerializer().serialize(head: Self.head(), data: broken)
            Issue.record("a malformed body parsed")
        } catch let error as CourierError {
            #expect(error.errorCode == -1016)
            let af = error.afNetworkingError
            #expect(af.domain == NSCocoaErrorDomain && af.code == 3840)
            #expect(af.userInfo[NSUnderlyingErrorKey] == nil)
        }
        do {
            _ = try FoundationJSONResponseSerializer().serialize(head: Self.head(500), data: broken)
            Issue.record("a malformed body parsed")
        } catch let error as CourierError {
            #expect(error.errorCode == -1011)
            let af = error.afNetworkingError
            #expect(af.domain == NSCocoaErrorDomain && af.code == 3840)
            let status = try #require(af.userInfo[NSUnderlyingErrorKey] as? NSError)
            #expect(status.domain == CourierError.responseSerializationErrorDomain && status.code == -1011)
            #expect(status.userInfo[CourierError.failingURLResponseDataErrorKey] as? Data == broken)
        }
        // A wrong content type is refused before the body is read, as AFNetworking returns nil at once.
        do {
            _ = try FoundationJSONResponseSerializer().serialize(head: Self.head(type: "text/html"), data: broken)
            Issue.record("a text/html body parsed")
        } catch let error as CourierError {
            #expect(error.errorCode == -1016)
            #expect(error.afNetworkingError.domain == CourierError.responseSerializationErrorDomain)
        }
        // A 4xx with a good body: both the object and the error, as AFNetworking gives them.
        do {
            _ = try FoundationJSONResponseSerializer().serialize(head: Self.head(404), data: Data(#"{"e":1}"#.utf8))
            Issue.record("a 404 was accepted")
        } catch let error as CourierError {
            #expect((error.serializedObject as? [String: Any])?["e"] as? Int == 1)
        }
    }

    @Test("Property lists: Foundation's objects, dates and data kept")
    func propertyList() throws {
        let date = Date(timeIntervalSince1970: 1_000)
        let source: [String: Any] = ["name": "Ada", "when": date, "bytes": Data([1, 2]), "list": [1, "two"]]
        let body = try PropertyListSerialization.data(fromPropertyList: source, format: .xml, options: 0)
        let object = try FoundationPropertyListResponseSerializer().serialize(
            head: Self.head(type: "application/x-plist"), data: body)
        let dictionary = try #require(object as? [String: Any])
        #expect(dictionary["name"] as? String == "Ada")
        #expect(dictionary["when"] as? Date == date)
        #expect(dictionary["bytes"] as? Data == Data([1, 2]))
        #expect((dictionary["list"] as? [Any])?.count == 2)
        do {
            _ = try FoundationPropertyListResponseSerializer().serialize(
                head: Self.head(type: "application/x-plist"), data: Data("<plist".utf8))
            Issue.record("a malformed property list parsed")
        } catch let error as CourierError {
            #expect(error.afNetworkingError.domain == NSCocoaErrorDomain)
        }
    }

    @Test("Through the AFNetworking-shaped GET: the success block's object is a [String: Any]")
    func throughTheCallbackAPI() async throws {
        let server = try await ScriptedServer.start([
            .init(status: 200, headers: [("Content-Type", "application/json")], body: #"{"user":{"name":"Ada"}}"#)
        ])
        defer { Task { try await server.stop() } }
        let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: .ephemeral)
        manager.completionQueue = DispatchQueue(label: "FoundationSerializerTests")
        manager.responseSerializer = FoundationJSONResponseSerializer()
        let name = Locked<String?>(nil)
        let outcome = Outcome()
        manager.get(
            "me",
            success: { _, responseObject in
                let user = (responseObject as? [String: Any])?["user"] as? [String: Any]
                name.withLock { $0 = user?["name"] as? String }
                outcome.fulfill(nil)
            },
            failure: { _, error in outcome.fulfill(error) })
        #expect(try await outcome.value() == nil)
        #expect(name.value == "Ada")
    }
}

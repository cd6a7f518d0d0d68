import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct PropertyListResponseSerializerTests {
    private typealias F = ResponseFixtures

    private struct Payload: Codable {
        var name: String
        var count: Int
        var ratio: Double
        var flag: Bool
        var when: Date
        var blob: Data
        var list: [String]
        var nested: [String: Int]
    }

    private static let payload = Payload(
        name: "Courier ✉️", count: 42, ratio: 0.25, flag: true, when: Date(timeIntervalSinceReferenceDate: 1000),
        blob: Data([0, 1, 2, 254, 255]), list: ["a", "b"], nested: ["x": 1])

    private static let expected: PropertyList = .dictionary([
        "name": .string("Courier ✉️"), "count": .integer(42), "ratio": .real(0.25), "flag": .bool(true),
        "when": .date(Date(timeIntervalSinceReferenceDate: 1000)), "blob": .data(Data([0, 1, 2, 254, 255])),
        "list": .array([.string("a"), .string("b")]), "nested": .dictionary(["x": .integer(1)]),
    ])

    private func serialize(_ data: Data?, status: Int = 200, contentType: String? = "application/x-plist") throws
        -> PropertyList?
    {
        try PropertyListResponseSerializer().serialize(
            response: F.response(status, contentType: contentType), data: data)
    }

    @Test func defaults() {
        let serializer = PropertyListResponseSerializer()
        #expect(serializer.acceptableContentTypes == ["application/x-plist"])
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func parsesEncodedPropertyLists(format: PropertyListSerialization.PropertyListFormat) throws {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = format
        let data = try encoder.encode(Self.payload)
        #expect(try serialize(data) == Self.expected)
    }

    @Test(arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func parsesPropertyListSerializationOutput(format: PropertyListSerialization.PropertyListFormat) throws {
        let object: [String: Any] = ["title": "Hi", "items": [1, 2, 3], "on": false]
        let data = try PropertyListSerialization.data(fromPropertyList: object, format: format, options: 0)
        let result = try #require(try serialize(data))
        #expect(result["title"] == .string("Hi"))
        #expect(result["items"] == .array([.integer(1), .integer(2), .integer(3)]))
        #expect(result["on"] == .bool(false))
    }

    @Test func nilAndEmptyDataGiveNil() throws {
        #expect(try serialize(nil) == nil)
        #expect(try serialize(Data()) == nil)
        #expect(try PropertyListResponseSerializer().serialize(response: nil, data: nil) == nil)
    }

    @Test(arguments: [
        "<plist><dict><key>a</key></plist>",
        "<?xml version=\"1.0\"?><plist version=\"1.0\"><array><integer>1</integer></plist>",
        "{ unterminated",
        "<plist><integer>abc</integer></plist>",
    ])
    func malformedPropertyListIsASerializationError(body: String) throws {
        let data = F.data(body)
        let error = try #require(throws: CourierError.self) { try serialize(data) }
        guard case .responseSerializationFailed(_, let context, let underlying) = error else {
            Issue.record("expected responseSerializationFailed, got \(error)")
            return
        }
        #expect(error.errorCode == -1016)
        #expect(underlying is DecodingError)
        #expect(context.data == data)
    }

    @Test func corruptBinaryPropertyListIsASerializationError() throws {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let data = try encoder.encode(["a": 1, "b": 2])
        let error = try #require(throws: CourierError.self) { try serialize(data.prefix(data.count - 1)) }
        #expect(error.errorCode == -1016)
    }

    @Test func unacceptableContentTypeIsRejected() throws {
        let data = try PropertyListEncoder().encode(["a": 1])
        let error = try #require(throws: CourierError.self) { try serialize(data, contentType: "text/xml") }
        guard case .unacceptableContentType("text/xml", _, _) = error else {
            Issue.record("expected unacceptableContentType, got \(error)")
            return
        }
    }

    @Test func statusErrorCarriesTheParsedPropertyList() throws {
        let data = try PropertyListEncoder().encode(["error": "denied"])
        let error = try #require(throws: CourierError.self) { try serialize(data, status: 403) }
        #expect(error.errorCode == -1011)
        #expect(error.errorDescription == "Request failed: forbidden (403)")
        #expect(error.serializedObject as? PropertyList == .dictionary(["error": .string("denied")]))
        #expect(error.responseData == data)
    }
}

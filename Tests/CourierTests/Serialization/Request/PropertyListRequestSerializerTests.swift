import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct PropertyListRequestSerializerTests {
    let serializer = PropertyListRequestSerializer()

    @Test func postWritesAnXMLPropertyList() throws {
        let request = try serializer.request(
            method: "POST", urlString: "https://example.com/x", parameters: ["name": "bang", "n": 1, "ok": true])
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-plist")
        let body = try #require(request.httpBody)
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        #expect(text.contains("<key>name</key>"))
        #expect(text.contains("<true/>"))
        let decoded = try PropertyListSerialization.propertyList(from: body, format: nil) as? [String: Any]
        #expect(decoded?["name"] as? String == "bang")
        #expect(
            try PropertyList(data: body) == .dictionary(["name": .string("bang"), "n": .integer(1), "ok": .bool(true)]))
    }

    @Test func binaryFormat() throws {
        let serializer = PropertyListRequestSerializer(format: .binary)
        let request = try serializer.request(
            method: "PUT", urlString: "https://example.com/x", parameters: ["d": .data(Data([1, 2])), "x": 1.5])
        let body = try #require(request.httpBody)
        #expect(body.prefix(6) == Data("bplist".utf8))
        #expect(try PropertyList(data: body) == .dictionary(["d": .data(Data([1, 2])), "x": .real(1.5)]))
    }

    @Test func getUsesTheQueryString() throws {
        let request = try serializer.request(method: "GET", urlString: "https://example.com/x", parameters: ["a": 1])
        #expect(request.url?.query == "a=1")
        #expect(request.httpBody == nil)
    }

    @Test func nilParametersGiveNoBody() throws {
        let request = try serializer.request(method: "POST", urlString: "https://example.com/x", parameters: nil)
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test(arguments: [Parameter.dictionary(["n": .null]), ["s": .set(["a"])], [["x": nil]]])
    func unrepresentableValuesThrow(parameters: Parameter) {
        #expect {
            try serializer.request(method: "POST", urlString: "https://example.com/x", parameters: parameters)
        } throws: { error in
            (error as? CourierError)?.errorCode == -1016
        }
    }

    @Test func openStepCannotBeWritten() {
        let serializer = PropertyListRequestSerializer(format: .openStep)
        #expect(throws: CourierError.self) {
            try serializer.request(method: "POST", urlString: "https://example.com/x", parameters: ["a": 1])
        }
    }
}

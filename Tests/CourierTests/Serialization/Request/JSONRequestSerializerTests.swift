import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct JSONRequestSerializerTests {
    let serializer = JSONRequestSerializer(outputFormatting: .sortedKeys)

    @Test func postWritesJSONBodyAndContentType() throws {
        let request = try serializer.request(
            method: "POST", urlString: "https://example.com/x",
            parameters: [
                "name": "bang", "tags": ["a", "b"], "n": 1, "ok": true, "x": 1.5, "none": nil, "nested": ["k": "v"],
            ])
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let body = try #require(request.httpBody)
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"n":1,"name":"bang","nested":{"k":"v"},"none":null,"ok":true,"tags":["a","b"],"x":1.5}"#)
        #expect(request.url?.absoluteString == "https://example.com/x")
    }

    @Test func getBehavesLikeTheHTTPSerializer() throws {
        let request = try serializer.request(
            method: "GET", urlString: "https://example.com/x", parameters: ["a": ["b", "c"]])
        #expect(request.url?.absoluteString == "https://example.com/x?a%5B%5D=b&a%5B%5D=c")
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func nilParametersGiveNoBodyAndNoContentType() throws {
        let request = try serializer.request(method: "POST", urlString: "https://example.com/x", parameters: nil)
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(request.value(forHTTPHeaderField: "User-Agent") == DefaultHeaders.userAgent)
    }

    @Test func existingContentTypeIsKept() throws {
        var request = URLRequest(url: URL(string: "https://example.com/x")!)
        request.httpMethod = "PUT"
        request.setValue("application/vnd.api+json", forHTTPHeaderField: "Content-Type")
        let serialized = try serializer.serialize(request, parameters: ["a": 1])
        #expect(serialized.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
        #expect(serialized.httpBody == Data(#"{"a":1}"#.utf8))
    }

    @Test(arguments: [
        Parameter.dictionary(["s": .set(["a"])]), ["d": .data(Data([1]))], ["n": .double(.nan)],
        ["i": .double(.infinity)],
        ["deep": [["x": .set([])]]],
    ])
    func unrepresentableValuesThrowCode1016(parameters: Parameter) {
        do {
            _ = try serializer.request(method: "POST", urlString: "https://example.com/x", parameters: parameters)
            Issue.record("expected an error")
        } catch let error as CourierError {
            #expect(error.errorCode == -1016)
            #expect(error.errorDescription == "The `parameters` argument is not valid JSON.")
            #expect(error.underlyingError is EncodingError)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func sharesTheBaseSerializersPropertiesThroughDynamicMembers() throws {
        var serializer = serializer
        serializer.timeoutInterval = 7
        serializer.setValue("token", forHTTPHeaderField: "X-Token")
        serializer.setAuthorization(username: "a", password: "b")
        #expect(serializer.http.timeoutInterval == 7)
        let request = try serializer.request(method: "POST", urlString: "https://example.com/x", parameters: ["a": 1])
        #expect(request.timeoutInterval == 7)
        #expect(request.value(forHTTPHeaderField: "X-Token") == "token")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Basic YTpi")
    }

    @Test func escapesSlashesLikeNSJSONSerializationByDefault() throws {
        let data = try JSONRequestSerializer().encode(["u": "a/b"])
        #expect(String(decoding: data, as: UTF8.self) == #"{"u":"a\/b"}"#)
    }

    @Test func encodesEncodableModels() throws {
        struct Signup: Encodable {
            var email: String
            var age: Int
        }
        let request = try serializer.request(
            method: "POST", urlString: "https://example.com/x",
            parameters: try Parameter(encoding: Signup(email: "a@b.c", age: 30)))
        #expect(request.httpBody == Data(#"{"age":30,"email":"a@b.c"}"#.utf8))
    }
}

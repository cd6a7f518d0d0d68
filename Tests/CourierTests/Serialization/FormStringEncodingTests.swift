import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``HTTPRequestSerializer/stringEncoding`` (AFNetworking's `stringEncoding`): form bodies in another encoding, as a
/// browser sends a form of a page in that encoding.
struct FormStringEncodingTests {
    private func body(_ request: URLRequest) -> String { String(decoding: request.httpBody ?? Data(), as: UTF8.self) }

    @Test("ISO-8859-1: é is %E9 and Content-Type names the charset; UTF-8 stays as it was")
    func latin1() throws {
        let url = try #require(URL(string: "https://api.example.test/form"))
        var serializer = HTTPRequestSerializer()
        let utf8 = try serializer.request(method: "POST", url: url, parameters: ["name": "José", "city": "Zürich"])
        #expect(body(utf8) == "city=Z%C3%BCrich&name=Jos%C3%A9")
        #expect(utf8.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        serializer.stringEncoding = .isoLatin1
        let latin1 = try serializer.request(method: "POST", url: url, parameters: ["name": "José", "city": "Zürich"])
        #expect(body(latin1) == "city=Z%FCrich&name=Jos%E9")
        #expect(
            latin1.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=iso-8859-1")
        // A query in the URL stays UTF-8 (RFC 3986).
        let get = try serializer.request(method: "GET", url: url, parameters: ["name": "José"])
        #expect(get.url?.query == "name=Jos%C3%A9")
        serializer.stringEncoding = .windowsCP1252
        let euro = try serializer.request(method: "PUT", url: url, parameters: ["price": "5 €"])
        #expect(body(euro) == "price=5%20%80")
    }

    @Test("A character the encoding cannot write fails with -1016, naming it")
    func unwritable() throws {
        var serializer = HTTPRequestSerializer()
        serializer.stringEncoding = .isoLatin1
        let url = try #require(URL(string: "https://api.example.test/form"))
        let error = #expect(throws: CourierError.self) {
            _ = try serializer.request(method: "POST", url: url, parameters: ["name": "日本"])
        }
        #expect(error?.errorCode == -1016)
        #expect(String(describing: error.map { $0 as any Error }).contains("日本"))
        // A custom query-string builder's text must fit the encoding too.
        serializer.queryStringSerialization = { _, _ in "q=€" }
        #expect(throws: CourierError.self) {
            _ = try serializer.request(method: "POST", url: url, parameters: ["a": "b"])
        }
        serializer.httpShouldUsePipelining = true  // accepted; no transport pipelines
    }
}

import Courier
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The README's example, verbatim between the markers, with the values it prints checked.
@Suite struct ReadmeExampleTests {
    @Test func readmeExampleCompilesAndBehavesAsDocumented() throws {
        let response = HTTPURLResponse(
            url: URL(string: "https://api.example.com/users")!, statusCode: 422, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Type": "application/json"])
        let data: Data? = Data(#"{"error":"name taken"}"#.utf8)

        // README example begins
        // Parameters are a typed tree, written with literals or made from any Encodable model.
        let parameters: Parameter = ["name": "bang", "phone": ["mobile": "xx"], "tags": ["a", "b"], "n": 1]

        // AFNetworking's query-string rules: sorted keys, `parent[child]`, `key[]`, percent-escaping.
        let query = QueryString.encode(parameters)
        // n=1&name=bang&phone%5Bmobile%5D=xx&tags%5B%5D=a&tags%5B%5D=b

        // GET puts parameters in the URL; POST, PUT and PATCH put them in the body.
        var serializer = HTTPRequestSerializer()
        serializer.setAuthorization(username: "user", password: "secret")
        let get = try serializer.request(
            method: "GET", urlString: "https://api.example.com/users", parameters: parameters)
        // get.url == https://api.example.com/users?n=1&name=bang&phone%5Bmobile%5D=xx&tags%5B%5D=a&tags%5B%5D=b

        let post = try JSONRequestSerializer().request(
            method: "POST", urlString: "https://api.example.com/users", parameters: parameters)
        // post.httpBody is JSON, Content-Type: application/json

        // Response serializers validate status and content type, then parse. A failed request still gives you the
        // server's error body, raw and parsed.
        do {
            let json = try JSONResponseSerializer().serialize(response: response, data: data)
            print(json?["user"]?["name"]?.stringValue ?? "")
        } catch let error as CourierError {
            print(error.errorCode)  // -1011 for a bad status, -1016 for a bad content type or body
            print(error.localizedDescription)  // "Request failed: client error (422)", in AFNetworking's words
            if let body = error.serializedObject as? JSON {  // the server's JSON error document
                print(body["error"]?.stringValue ?? "")
            }
            print(error.responseData?.count ?? 0)  // the raw body is there too
        }
        // README example ends

        #expect(query == "n=1&name=bang&phone%5Bmobile%5D=xx&tags%5B%5D=a&tags%5B%5D=b")
        #expect(get.url?.absoluteString == "https://api.example.com/users?" + query)
        #expect(post.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(
            try JSON(data: post.httpBody ?? Data())
                == ["name": "bang", "phone": ["mobile": "xx"], "tags": ["a", "b"], "n": 1])
        #expect(get.value(forHTTPHeaderField: "Authorization") == "Basic dXNlcjpzZWNyZXQ=")
        // What the example's catch block prints.
        do {
            _ = try JSONResponseSerializer().serialize(response: response, data: data)
            Issue.record("the 422 was accepted")
        } catch let error as CourierError {
            #expect(error.errorCode == -1011)
            #expect(error.localizedDescription == "Request failed: client error (422)")
            #expect((error.serializedObject as? JSON)?["error"]?.stringValue == "name taken")
            #expect(error.responseData?.count == data?.count)
        }
    }

    @Test func readmeExampleMatchesTheTestVerbatim() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let test = try String(contentsOf: here, encoding: .utf8)
        let readmeBlock = try #require(
            readme.components(separatedBy: "## Example\n\n```swift\nimport Courier\n\n").last?
                .components(separatedBy: "```").first)
        let testBlock = try #require(
            test.components(separatedBy: "// README example begins\n").dropFirst().first?
                .components(separatedBy: "        // README example ends").first)
        let normalize = { (text: String) in
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        #expect(normalize(readmeBlock) == normalize(testBlock))
    }
}

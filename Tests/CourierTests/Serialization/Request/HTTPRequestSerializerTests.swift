import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct HTTPRequestSerializerTests {
    let serializer = HTTPRequestSerializer()

    @Test func serializingLeavesTheCallersRequestAsItWas() throws {
        // The serializers change requests they made themselves in place; one handed in must stay untouched.
        let original = URLRequest(url: try #require(URL(string: "https://example.com/items")))
        var post = original
        post.httpMethod = "POST"
        let json = JSONRequestSerializer()
        for (serialized, source) in [
            (try serializer.serialize(original, parameters: ["a": 1]), original),
            (try serializer.serialize(post, parameters: ["a": 1]), post),
            (try json.serialize(post, parameters: ["a": 1]), post),
        ] {
            #expect(serialized.value(forHTTPHeaderField: "User-Agent") != nil)
            #expect(serialized.url != source.url || serialized.httpBody != nil)
            #expect(source.allHTTPHeaderFields?.isEmpty ?? true)
            #expect(source.httpBody == nil)
        }
        #expect(original.url?.absoluteString == "https://example.com/items")
        #expect(post.url?.absoluteString == "https://example.com/items")
    }

    @Test func getPutsParametersInTheQuery() throws {
        let request = try serializer.request(
            method: "GET", urlString: "https://example.com/search", parameters: ["q": "a b", "page": 2])
        #expect(request.url?.absoluteString == "https://example.com/search?page=2&q=a%20b")
        #expect(request.httpMethod == "GET")
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func headAndDeleteAlsoUseTheQueryAndMethodsCompareUpperCased() throws {
        for method in ["HEAD", "DELETE", "get", "Delete"] {
            let request = try serializer.request(
                method: method, urlString: "https://example.com/x", parameters: ["a": 1])
            #expect(request.url?.absoluteString == "https://example.com/x?a=1", "\(method)")
        }
    }

    @Test func existingQueryIsExtendedWithAmpersand() throws {
        let request = try serializer.request(
            method: "GET", urlString: "https://example.com/x?keep=1", parameters: ["a": "b"])
        #expect(request.url?.absoluteString == "https://example.com/x?keep=1&a=b")
    }

    @Test func queryGoesBeforeTheFragment() throws {
        let request = try serializer.request(
            method: "GET", urlString: "https://example.com/x#frag", parameters: ["a": 1])
        #expect(request.url?.absoluteString == "https://example.com/x?a=1#frag")
    }

    @Test func emptyParametersLeaveTheURLUnchanged() throws {
        for parameters: Parameter? in [nil, [:], ["a": []]] {
            let request = try serializer.request(
                method: "GET", urlString: "https://example.com/x", parameters: parameters)
            #expect(request.url?.absoluteString == "https://example.com/x")
        }
    }

    @Test func postPutsTheQueryInTheBodyWithFormContentType() throws {
        let request = try serializer.request(
            method: "POST", urlString: "https://example.com/x", parameters: ["b": "2", "a": ["x", "y"]])
        #expect(request.url?.absoluteString == "https://example.com/x")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.httpBody == Data("a%5B%5D=x&a%5B%5D=y&b=2".utf8))
    }

    @Test func nilParametersGiveAnEmptyFormBody() throws {
        for method in ["POST", "PUT", "PATCH"] {
            let request = try serializer.request(method: method, urlString: "https://example.com/x", parameters: nil)
            #expect(request.httpBody == Data())
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        }
    }

    @Test func existingContentTypeIsKept() throws {
        var request = URLRequest(url: URL(string: "https://example.com/x")!)
        request.httpMethod = "POST"
        request.setValue("text/plain", forHTTPHeaderField: "content-type")
        let serialized = try serializer.serialize(request, parameters: ["a": 1])
        #expect(serialized.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(serialized.httpBody == Data("a=1".utf8))
    }

    @Test func defaultHeadersAreAddedOnlyWhenAbsentCaseInsensitively() throws {
        var serializer = serializer
        serializer.setValue("from-serializer", forHTTPHeaderField: "X-Thing")
        var request = URLRequest(url: URL(string: "https://example.com/x")!)
        request.setValue("mine", forHTTPHeaderField: "x-thing")
        request.setValue("agent/1", forHTTPHeaderField: "user-agent")
        let serialized = try serializer.serialize(request, parameters: nil)
        #expect(serialized.value(forHTTPHeaderField: "X-Thing") == "mine")
        #expect(serialized.value(forHTTPHeaderField: "User-Agent") == "agent/1")
        #expect(
            serialized.value(forHTTPHeaderField: "Accept-Language")
                == serializer.value(forHTTPHeaderField: "accept-language"))
    }

    @Test func hasUserAgentAndAcceptLanguageByDefault() throws {
        #expect(serializer.value(forHTTPHeaderField: "User-Agent") == DefaultHeaders.userAgent)
        let language = try #require(serializer.value(forHTTPHeaderField: "Accept-Language"))
        #expect(language.hasSuffix(";q=1") || language.contains(";q=1, "))
    }

    @Test func headerSetGetRemove() {
        var serializer = serializer
        serializer.setValue("1", forHTTPHeaderField: "X-A")
        #expect(serializer.value(forHTTPHeaderField: "x-a") == "1")
        serializer.setValue("2", forHTTPHeaderField: "x-A")
        #expect(serializer.value(forHTTPHeaderField: "X-A") == "2")
        #expect(serializer.headers.fields.filter { $0.name.lowercased() == "x-a" }.count == 1)
        serializer.setValue(nil, forHTTPHeaderField: "X-A")
        #expect(serializer.value(forHTTPHeaderField: "X-A") == nil)
    }

    @Test func basicAuthorization() throws {
        var serializer = serializer
        serializer.setAuthorization(username: "user", password: "pässword")
        let expected = "Basic " + Data("user:pässword".utf8).base64EncodedString()
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == expected)
        #expect(expected == "Basic dXNlcjpww6Rzc3dvcmQ=")
        let request = try serializer.request(method: "GET", urlString: "https://example.com", parameters: nil)
        #expect(request.value(forHTTPHeaderField: "Authorization") == expected)
        serializer.clearAuthorization()
        #expect(serializer.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func customQueryStringSerialization() throws {
        var serializer = serializer
        serializer.queryStringSerialization = { request, parameters in
            "custom=\(request.httpMethod ?? "")&leaf=\(parameters.isLeaf)"
        }
        let get = try serializer.request(method: "GET", urlString: "https://example.com/x", parameters: ["a": 1])
        #expect(get.url?.query == "custom=GET&leaf=false")
        let post = try serializer.request(method: "POST", urlString: "https://example.com/x", parameters: ["a": 1])
        #expect(post.httpBody == Data("custom=POST&leaf=false".utf8))
    }

    @Test func customQueryStringErrorIsRethrownUnchanged() {
        struct Refused: Error, Equatable {}
        var serializer = serializer
        serializer.queryStringSerialization = { _, _ in throw Refused() }
        #expect(throws: Refused()) {
            try serializer.request(method: "GET", urlString: "https://example.com/x", parameters: ["a": 1])
        }
    }

    @Test func customQueryStringIsNotCalledForNilParameters() throws {
        var serializer = serializer
        serializer.queryStringSerialization = { _, _ in
            Issue.record("called")
            return "x"
        }
        let request = try serializer.request(method: "GET", urlString: "https://example.com/x", parameters: nil)
        #expect(request.url?.absoluteString == "https://example.com/x")
    }

    @Test func methodsEncodingParametersInURIAreConfigurable() throws {
        var serializer = serializer
        serializer.methodsEncodingParametersInURI = ["GET", "HEAD"]
        let request = try serializer.request(
            method: "DELETE", urlString: "https://example.com/x", parameters: ["id": 3])
        #expect(request.url?.absoluteString == "https://example.com/x")
        #expect(request.httpBody == Data("id=3".utf8))
    }

    @Test func arrayAndBoolOptionsApplyToRequests() throws {
        var serializer = serializer
        serializer.arrayEncoding = .noBrackets
        serializer.boolEncoding = .literal
        let request = try serializer.request(
            method: "GET", urlString: "https://example.com/x", parameters: ["ids": [1, 2], "on": true])
        #expect(request.url?.query == "ids=1&ids=2&on=true")
    }

    @Test func requestPropertiesApplyOnlyWhenSet() throws {
        let plain = try serializer.request(method: "GET", urlString: "https://example.com", parameters: nil)
        let defaults = URLRequest(url: URL(string: "https://example.com")!)
        #expect(plain.timeoutInterval == defaults.timeoutInterval)
        #expect(plain.cachePolicy == defaults.cachePolicy)
        #expect(plain.httpShouldHandleCookies == defaults.httpShouldHandleCookies)
        #expect(plain.allowsCellularAccess == defaults.allowsCellularAccess)

        var serializer = serializer
        serializer.timeoutInterval = 12
        serializer.cachePolicy = .reloadIgnoringLocalCacheData
        serializer.httpShouldHandleCookies = false
        serializer.allowsCellularAccess = false
        serializer.networkServiceType = .background
        let set = try serializer.request(method: "GET", urlString: "https://example.com", parameters: nil)
        #expect(set.timeoutInterval == 12)
        #expect(set.cachePolicy == .reloadIgnoringLocalCacheData)
        #expect(set.httpShouldHandleCookies == false)
        #expect(set.allowsCellularAccess == false)
        #expect(set.networkServiceType == .background)
    }

    @Test(arguments: [
        "", "not a url", "http://exa mple.com/", "http://[::1", "https://", "http:///path", "/relative", "foo",
    ])
    func invalidURLStringsThrowBadURL(urlString: String) {
        do {
            _ = try serializer.request(method: "GET", urlString: urlString, parameters: ["a": 1])
            Issue.record("expected an error for \(urlString.debugDescription)")
        } catch let error as CourierError {
            #expect(error.errorCode == -1000)
            guard case .invalidURL(let string) = error else {
                Issue.record("wrong case \(error)")
                return
            }
            #expect(string == urlString)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func unicodeAndSpacesInPathsArePercentEncodedByFoundation() throws {
        let request = try serializer.request(method: "GET", urlString: "https://example.com/a b/日本", parameters: nil)
        #expect(request.url?.absoluteString == "https://example.com/a%20b/%E6%97%A5%E6%9C%AC")
    }

    @Test func longCJKParameterValuesRoundTrip() throws {
        let value = String(repeating: "漢字かなカナ한국어", count: 12)
        let request = try serializer.request(
            method: "GET", urlString: "https://example.com/x", parameters: ["q": .string(value)])
        let url = try #require(request.url)
        let components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        #expect(components.queryItems == [URLQueryItem(name: "q", value: value)])
    }
}

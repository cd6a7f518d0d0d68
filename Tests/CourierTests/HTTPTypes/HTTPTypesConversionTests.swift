import CourierHTTPTypes
import Foundation
import HTTPTypes
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// swift-http-types' values to and from Courier's: field order, the case of names and repeated fields survive both
/// ways, and what `HTTPFields` cannot hold is a typed ``CourierError``, never a trap.
@Suite struct HTTPTypesConversionTests {
    static let cookieWithComma = "b=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT"

    @Test func headersKeepOrderCaseAndRepeatedFieldsBothWays() throws {
        var headers = HTTPHeaderFields()
        headers.add(name: "X-Zeta", value: "1")
        headers.add(name: "set-cookie", value: "a=1")
        headers.add(name: "x-ALPHA", value: "two words")
        headers.add(name: "Set-Cookie", value: Self.cookieWithComma)
        let fields = try HTTPFields(headers)
        #expect(fields.map(\.name.rawName) == ["X-Zeta", "set-cookie", "x-ALPHA", "Set-Cookie"])
        #expect(fields.map(\.value) == ["1", "a=1", "two words", Self.cookieWithComma])
        #expect(fields[values: .setCookie] == ["a=1", Self.cookieWithComma])
        #expect(HTTPHeaderFields(fields) == headers)
    }

    @Test func anInvalidFieldNameIsATypedErrorNotATrap() {
        let headers: HTTPHeaderFields = ["Good": "1", "Bad Name": "2"]
        let error = #expect(throws: CourierError.self) { try HTTPFields(headers) }
        #expect(error?.errorCode == -1016)
        let invalid = error?.underlyingError as? InvalidHTTPFieldError
        #expect(invalid == InvalidHTTPFieldError(name: "Bad Name", value: "2", part: .name))
        #expect(error?.localizedDescription.contains("“Bad Name”") == true)
    }

    @Test(arguments: ["split\r\nInjected: yes", "nul\u{0}byte", " leading space"])
    func anInvalidFieldValueIsATypedErrorNotATrap(value: String) {
        let headers: HTTPHeaderFields = ["X-Value": value]
        let error = #expect(throws: CourierError.self) { try HTTPFields(headers) }
        #expect((error?.underlyingError as? InvalidHTTPFieldError)?.part == .value)
        // The description escapes control characters: a refused value cannot forge a log line.
        #expect(error?.localizedDescription.contains("\r") == false)
    }

    @Test func aResponseHeadWithAnInvalidFieldOrStatusIsABadServerResponse() throws {
        let url = try #require(URL(string: "http://example.com/"))
        var headers = HTTPHeaderFields()
        headers.add(name: "X(bad)", value: "1")
        let badField = #expect(throws: CourierError.self) {
            try HTTPResponse(ResponseHead(statusCode: 200, headers: headers, url: url))
        }
        #expect(badField?.errorCode == -1011)
        #expect((badField?.underlyingError as? InvalidHTTPFieldError)?.part == .name)
        let badStatus = #expect(throws: CourierError.self) {
            try HTTPResponse(ResponseHead(statusCode: 1000, headers: HTTPHeaderFields(), url: url))
        }
        #expect(badStatus?.errorCode == -1011)
    }

    @Test func aResponseRoundTripsThroughAResponseHead() throws {
        let url = try #require(URL(string: "http://example.com/x"))
        var fields = HTTPFields()
        fields.append(HTTPField(name: .setCookie, value: "a=1"))
        fields.append(HTTPField(name: .contentType, value: "text/plain"))
        fields.append(HTTPField(name: .setCookie, value: Self.cookieWithComma))
        let response = HTTPResponse(status: .created, headerFields: fields)
        let head = ResponseHead(response, url: url, httpVersion: "HTTP/2")
        #expect(head.statusCode == 201)
        #expect(head.headers.values(for: "set-cookie") == ["a=1", Self.cookieWithComma])
        #expect(head.httpVersion == "HTTP/2")
        #expect(try HTTPResponse(head) == response)
        // Foundation's form joins the repeated field, as Courier's HTTPURLResponse always does.
        let foundation = try #require(HTTPURLResponse(response, url: url))
        #expect(foundation.statusCode == 201)
        #expect(foundation.value(forHTTPHeaderField: "Set-Cookie") == "a=1, " + Self.cookieWithComma)
        let back = try HTTPResponse(foundation)
        #expect(back.status == .created)
        #expect(back.headerFields[.contentType] == "text/plain")
    }

    @Test func aRequestBecomesTheURLRequestCourierSends() throws {
        var request = HTTPRequest(
            method: .put, scheme: "https", authority: "example.com:8443", path: "/a%2Fb/c?q=x%20y&r=%E2%9C%93")
        request.headerFields.append(HTTPField(name: .cookie, value: "a=1"))
        request.headerFields.append(HTTPField(name: .accept, value: "text/plain"))
        request.headerFields.append(HTTPField(name: .cookie, value: "b=2"))
        request.headerFields.append(HTTPField(name: .accept, value: "application/json"))
        let body = Data("payload".utf8)
        let urlRequest = try URLRequest(request, body: body)
        #expect(urlRequest.url?.absoluteString == "https://example.com:8443/a%2Fb/c?q=x%20y&r=%E2%9C%93")
        #expect(urlRequest.httpMethod == "PUT")
        #expect(urlRequest.value(forHTTPHeaderField: "Cookie") == "a=1; b=2")
        #expect(urlRequest.value(forHTTPHeaderField: "Accept") == "text/plain, application/json")
        #expect(urlRequest.httpBody == body)

        let back = try HTTPRequest(urlRequest)
        #expect(back.method == .put)
        #expect(back.url == urlRequest.url)
        // URLRequest keeps no order: the fields come back sorted by name, as Courier sends them.
        #expect(back.headerFields.map(\.name.rawName) == ["Accept", "Cookie"])
        #expect(back.headerFields[.cookie] == "a=1; b=2")
    }

    @Test func aRequestWithoutAURLOrWithAnInvalidFieldIsATypedError() throws {
        let relative = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/only/a/path")
        let noURL = #expect(throws: CourierError.self) { try URLRequest(relative) }
        #expect(noURL?.errorCode == -1000)
        // A plain SessionManager has no base URL to resolve it against.
        #expect(throws: CourierError.self) { try SessionManager().urlRequest(for: relative) }

        var urlRequest = URLRequest(url: try #require(URL(string: "http://example.com/")))
        urlRequest.setValue("1", forHTTPHeaderField: "Bad Name")
        let badField = #expect(throws: CourierError.self) { try HTTPRequest(urlRequest) }
        #expect(badField?.errorCode == -1016)
        urlRequest.setValue(nil, forHTTPHeaderField: "Bad Name")
        urlRequest.httpMethod = "GET IT"
        #expect(throws: CourierError.self) { try HTTPRequest(urlRequest) }
    }

    @Test func anHTTPSessionManagerResolvesAPathOnlyRequestAgainstItsBaseURL() throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/v1"))
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/users/a%20b?page=2&q=%2B")
        let urlRequest = try manager.urlRequest(for: request)
        #expect(urlRequest.url?.absoluteString == "https://api.example.com/v1/users/a%20b?page=2&q=%2B")
    }
}

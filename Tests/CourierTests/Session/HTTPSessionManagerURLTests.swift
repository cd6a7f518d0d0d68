import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct HTTPSessionManagerURLTests {
    @Test func baseURLWithAPathGetsATrailingSlash() {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://example.com/v1"))
        #expect(manager.baseURL?.absoluteString == "http://example.com/v1/")
        let root = HTTPSessionManager(baseURL: URL(string: "http://example.com"))
        #expect(root.baseURL?.absoluteString == "http://example.com")
        let slashed = HTTPSessionManager(baseURL: URL(string: "http://example.com/v1/"))
        #expect(slashed.baseURL?.absoluteString == "http://example.com/v1/")
    }

    @Test(arguments: [
        ("foo", "http://example.com/v1/foo"), ("/foo", "http://example.com/foo"),
        ("foo?bar=baz", "http://example.com/v1/foo?bar=baz"), ("../foo", "http://example.com/foo"),
        ("?a=b", "http://example.com/v1/?a=b"), ("", "http://example.com/v1/"), ("foo/", "http://example.com/v1/foo/"),
        ("https://other.com/x", "https://other.com/x"), ("//other.com/y", "http://other.com/y"),
    ])
    func relativeStringsResolvePerRFC3986(relative: String, expected: String) throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "http://example.com/v1"))
        #expect(try manager.url(for: relative).absoluteString == expected)
    }

    @Test func repeatedPathsResolveTheSamePastTheRememberedOnes() throws {
        // Recently used plain paths are remembered (64 of them); more than that, twice over, must still resolve.
        let manager = HTTPSessionManager(baseURL: URL(string: "http://example.com/v1"))
        let other = HTTPSessionManager(baseURL: URL(string: "https://other.org/api/"))
        for _ in 0..<2 {
            for index in 0..<150 {
                let path = "items/\(index)?page=\(index % 3)"
                #expect(try manager.url(for: path).absoluteString == "http://example.com/v1/\(path)")
                #expect(try other.url(for: path).absoluteString == "https://other.org/api/\(path)")
            }
        }
    }

    @Test func withoutABaseURLStringsMustBeAbsolute() throws {
        let manager = HTTPSessionManager()
        #expect(try manager.url(for: "https://example.com/x").absoluteString == "https://example.com/x")
        #expect(throws: CourierError.self) { try manager.url(for: "relative/path") }
    }

    @Test func requestsUseTheSerializerThenPerRequestHeaders() throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/v2/"))
        manager.requestSerializer = JSONRequestSerializer()
        let request = try manager.makeRequest(
            method: "POST", urlString: "users", parameters: ["name": "x"], headers: ["User-Agent": "custom/1"])
        #expect(request.url?.absoluteString == "https://api.example.com/v2/users")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(request.value(forHTTPHeaderField: "User-Agent") == "custom/1")
        #expect(request.httpBody == Data(#"{"name":"x"}"#.utf8))
    }

    @Test func dataTaskIsReturnedSuspendedWithAUniqueIdentifier() throws {
        let manager = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/"))
        let first = try #require(manager.dataTask(method: "GET", urlString: "a"))
        let second = try #require(manager.dataTask(method: "GET", urlString: "b"))
        #expect(first.state == .suspended)
        #expect(first.taskIdentifier != second.taskIdentifier)
        #expect(manager.tasks.count == 2)
        #expect(manager.dataTasks.count == 2)
        #expect(manager.uploadTasks.isEmpty)
        first.cancel()
        second.cancel()
    }

    @Test(arguments: TestTransports.names)
    func cancelBeforeResumeCompletesOnceWithMinus999(transport: String) async throws {
        let manager = SessionManager(transport: TestTransports.make(transport))
        manager.completionQueue = DispatchQueue(label: "test")
        let calls = Locked(0)
        let done = Outcome()
        let task = manager.dataTask(with: URLRequest(url: URL(string: "http://127.0.0.1:9/never")!)) { _, _, error in
            calls.withLock { $0 += 1 }
            done.fulfill(error)
        }
        task.cancel()
        task.cancel()
        task.resume()
        let error = try await done.value()
        #expect((error as? CourierError)?.errorCode == -999)
        await manager.settle()
        #expect(calls.value == 1)
        #expect(task.state == .completed)
        #expect(manager.tasks.isEmpty)
    }

    /// A running task keeps its released manager (as a URLSession keeps its delegate, see ManagerLifetimeTests);
    /// cancelling the task lets the manager go once its completion has run.
    @Test(arguments: TestTransports.names)
    func releasingTheManagerKeepsItsRunningTasks(transport: String) async throws {
        let done = Outcome()
        var manager: SessionManager? = SessionManager(transport: TestTransports.make(transport))
        manager?.completionQueue = DispatchQueue(label: "test")
        weak let weakManager = manager
        let task = manager?.dataTask(with: URLRequest(url: try await HTTPBin.url("delay/10"))) { _, _, error in
            done.fulfill(error)
        }
        task?.resume()
        manager = nil
        #expect(weakManager != nil)
        task?.cancel()
        let error = try await done.value()
        #expect((error as? CourierError)?.errorCode == -999)
        try await waitUntil(timeout: .seconds(5)) { weakManager == nil }
    }

    @Test(arguments: TestTransports.names)
    func invalidatedManagerRefusesNewTasks(transport: String) async throws {
        let manager = SessionManager(transport: TestTransports.make(transport))
        manager.completionQueue = DispatchQueue(label: "test")
        manager.invalidate(cancelingTasks: true)
        let done = Outcome()
        _ = manager.dataTask(with: URLRequest(url: URL(string: "http://127.0.0.1:9/")!)) { _, _, error in
            done.fulfill(error)
        }
        #expect((try await done.value() as? CourierError)?.errorCode == -999)
    }
}

@Suite struct RedirectPolicyTests {
    func response(_ status: Int, location: String, from url: String = "https://a.example/start") -> HTTPURLResponse {
        HTTPURLResponse(
            url: URL(string: url)!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Location": location])!
    }

    func post(_ url: String = "https://a.example/start") -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.httpBody = Data("x=1".utf8)
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        request.setValue("a=b", forHTTPHeaderField: "Cookie")
        return request
    }

    @Test(arguments: [301, 302, 303])
    func postBecomesGetWithoutBody(status: Int) throws {
        let next = try #require(
            RedirectPolicy.nextRequest(after: post(), response: response(status, location: "/next")))
        #expect(next.request.httpMethod == "GET")
        #expect(next.request.httpBody == nil)
        #expect(next.request.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(next.keepsBody == false)
        #expect(next.request.url?.absoluteString == "https://a.example/next")
        #expect(next.request.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    @Test(arguments: [307, 308])
    func temporaryAndPermanentKeepMethodAndBody(status: Int) throws {
        let next = try #require(RedirectPolicy.nextRequest(after: post(), response: response(status, location: "next")))
        #expect(next.request.httpMethod == "POST")
        #expect(next.request.httpBody == Data("x=1".utf8))
        #expect(next.keepsBody)
    }

    @Test func headStaysHead() throws {
        var head = URLRequest(url: URL(string: "https://a.example/x")!)
        head.httpMethod = "HEAD"
        let next = try #require(RedirectPolicy.nextRequest(after: head, response: response(302, location: "/y")))
        #expect(next.request.httpMethod == "HEAD")
    }

    @Test func crossingOriginsDropsAuthorizationAndCookies() throws {
        for location in ["https://b.example/next", "http://a.example/next", "https://a.example:8443/next"] {
            let next = try #require(
                RedirectPolicy.nextRequest(after: post(), response: response(307, location: location)))
            #expect(next.request.value(forHTTPHeaderField: "Authorization") == nil, "\(location)")
            #expect(next.request.value(forHTTPHeaderField: "Cookie") == nil)
        }
        let same = try #require(
            RedirectPolicy.nextRequest(after: post(), response: response(307, location: "https://A.example:443/n")))
        #expect(same.request.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    @Test func nonRedirectsAndMissingLocationsAreNotFollowed() {
        #expect(RedirectPolicy.nextRequest(after: post(), response: response(200, location: "/x")) == nil)
        #expect(RedirectPolicy.nextRequest(after: post(), response: response(304, location: "/x")) == nil)
        let noLocation = HTTPURLResponse(
            url: URL(string: "https://a.example/")!, statusCode: 302, httpVersion: nil, headerFields: [:])!
        #expect(RedirectPolicy.nextRequest(after: post(), response: noLocation) == nil)
    }
}

@Suite struct AuthenticationTests {
    @Test func md5KnownVectors() {
        #expect(MD5.hex("") == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(MD5.hex("abc") == "900150983cd24fb0d6963f7d28e17f72")
        #expect(MD5.hex("The quick brown fox jumps over the lazy dog") == "9e107d9d372bb6826bd81d3542a419d6")
        #expect(MD5.hex(String(repeating: "a", count: 1000)) == "cabe45dcc9ae5b66ba86600cca6b8ba8")
    }

    @Test func parsesChallenges() throws {
        let response = HTTPURLResponse(
            url: URL(string: "https://a.example/")!, statusCode: 401, httpVersion: nil,
            headerFields: [
                "WWW-Authenticate":
                    #"Digest realm="me@kennethreitz.com", nonce="abc, def", qop="auth,auth-int", opaque="xyz", algorithm=MD5"#
            ])!
        let challenge = try #require(Self.challenge(in: response))
        #expect(challenge.scheme == "Digest")
        #expect(challenge.realm == "me@kennethreitz.com")
        #expect(challenge.parameters["nonce"] == "abc, def")
        #expect(challenge.parameters["algorithm"] == "MD5")
        let header = Authentication.authorization(
            for: challenge, credential: Credential(user: "u", password: "p"), method: "GET",
            url: URL(string: "https://a.example/dir/index.html?x=1")!)
        #expect(header.hasPrefix("Digest username=\"u\""))
        #expect(header.contains("uri=\"/dir/index.html?x=1\""))
        #expect(header.contains("qop=auth"))
        #expect(header.contains("opaque=\"xyz\""))
    }

    @Test func rfc2617DigestExample() {
        // RFC 2617 §3.5: Mufasa / "Circle Of Life", without qop the response is MD5(HA1:nonce:HA2).
        let ha1 = MD5.hex("Mufasa:testrealm@host.com:Circle Of Life")
        let ha2 = MD5.hex("GET:/dir/index.html")
        #expect(ha1 == "939e7578ed9e3c518a452acee763bce9")
        #expect(ha2 == "39aff3a2bab6126f332b942af96d3366")
    }

    @Test func ignoresOtherSchemesAndStatuses() {
        let bearer = HTTPURLResponse(
            url: URL(string: "https://a.example/")!, statusCode: 401, httpVersion: nil,
            headerFields: ["WWW-Authenticate": "Bearer realm=x"])!
        #expect(Self.challenge(in: bearer) == nil)
        let ok = HTTPURLResponse(
            url: URL(string: "https://a.example/")!, statusCode: 200, httpVersion: nil,
            headerFields: ["WWW-Authenticate": "Basic realm=x"])!
        #expect(Self.challenge(in: ok) == nil)
    }

    @Test func severalChallengesInOneField() throws {
        let challenges = Authentication.challenges(
            in: #"Basic realm="a, b", Digest realm="d", nonce="n", qop="auth", Bearer"#)
        #expect(challenges.map(\.scheme) == ["Basic", "Digest", "Bearer"])
        #expect(challenges[0].parameters == ["realm": "a, b"])
        #expect(challenges[1].parameters == ["realm": "d", "nonce": "n", "qop": "auth"])
        var headers = HTTPHeaderFields()
        headers.add(name: "WWW-Authenticate", value: #"Basic realm="a""#)
        headers.add(name: "WWW-Authenticate", value: #"Digest realm="d", nonce="n""#)
        let response = try #require(
            HTTPURLResponse(
                url: URL(string: "https://a.example/")!, statusCode: 401, httpVersion: nil, headerFields: [:]))
        let digest = Authentication.challenge(
            in: headers, response: response, previousFailureCount: 0, preferring: [.digest])
        #expect(digest?.scheme == "Digest")
        let basicOnly = Authentication.challenge(
            in: headers, response: response, previousFailureCount: 0, preferring: [.basic])
        #expect(basicOnly?.scheme == "Basic")
    }

    /// The challenge the session would answer in a `401` (any Basic or Digest one); `nil` for other statuses.
    static func challenge(in response: HTTPURLResponse) -> AuthenticationChallenge? {
        guard response.statusCode == 401 else { return nil }
        var headers = HTTPHeaderFields()
        for case (let name as String, let value as String) in response.allHeaderFields {
            headers.add(name: name, value: value)
        }
        return Authentication.challenge(
            in: headers, response: response, previousFailureCount: 0, preferring: Credential.Scheme.all)
    }
}

import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `URLProtocol`-based stubbing tools (OHHTTPStubs, Mocker) do, done by hand: a protocol class in the
/// `URLSessionConfiguration` given to ``URLSessionTransport/init(configuration:transportConfiguration:)`` answers
/// the session's requests, and the settings the session layer owns stay off.
@Suite struct URLProtocolStubTests {
    final class CannedProtocol: URLProtocol {
        override class func canInit(with request: URLRequest) -> Bool {
            request.url?.host == "canned.example.test"
        }

        override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

        override func startLoading() {
            guard let url = request.url,
                let response = HTTPURLResponse(
                    url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                    headerFields: ["Content-Type": "text/plain", "Set-Cookie": "canned=1; Path=/"])
            else { return }
            let body = "canned for \(request.httpMethod ?? "?") \(url.path)"
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocol(self, didLoad: Data(body.utf8))
            client?.urlProtocolDidFinishLoading(self)
        }

        override func stopLoading() {}
    }

    @Test("A URLProtocol in the given configuration answers; cookies still go to the session's own store")
    func protocolClassAnswers() async throws {
        let settings = URLSessionConfiguration.ephemeral
        settings.protocolClasses = [CannedProtocol.self] + (settings.protocolClasses ?? [])
        let transport = URLSessionTransport(configuration: settings)
        let jar = CookieJar()
        var configuration = SessionConfiguration.ephemeral
        configuration.cookieStore = jar
        let manager = HTTPSessionManager(
            baseURL: URL(string: "https://canned.example.test/"), configuration: configuration, transport: transport)
        let response = try await manager.send("GET", "a/b", serializer: HTTPResponseSerializer())
        #expect(String(decoding: response.value ?? Data(), as: UTF8.self) == "canned for GET /a/b")
        #expect(jar.cookies(for: URL(string: "https://canned.example.test/")!).map(\.name) == ["canned"])
        // The caller's configuration is not changed by the transport.
        #expect(settings.httpShouldSetCookies == URLSessionConfiguration.ephemeral.httpShouldSetCookies)
        manager.invalidate(cancelingTasks: true)
        await transport.shutdown()
    }
}

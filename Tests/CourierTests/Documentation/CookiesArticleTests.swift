import Courier
import Foundation
import Testing

// The code sample of Sources/Courier/Courier.docc/Cookies.md, between `// sample: NAME` and `// end sample`, appears
// in the article verbatim (checked by `articleShowsTheSampleVerbatim`); the test below runs it.

// sample: cookies
/// A jar of a session's own, persisted as JSON and in curl's format, and looked into.
func cookieExamples() throws -> CookieJar {
    // A session whose cookies are its own (a test, one user of a server app).
    var configuration = SessionConfiguration.default
    let jar = CookieJar()
    configuration.cookieStore = jar
    let client = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/"), configuration: configuration)
    _ = client

    // Cookies a response set (the session does this for every response).
    let api = URL(string: "https://api.example.com/v1/login")!
    jar.storeCookies(fromSetCookieFields: ["sid=abc; Secure; HttpOnly; Path=/; Max-Age=3600"], for: api)

    // Persist it: the jar is Codable, or in curl's file format.
    let saved = try JSONEncoder().encode(jar)
    let restored = try JSONDecoder().decode(CookieJar.self, from: saved)
    let curlFile = restored.netscapeFileText  // what `curl -c` writes; `curl -b` reads it
    let fromCurl = CookieJar()
    fromCurl.insert(netscapeFileText: curlFile)

    // Look inside, or change it by hand.
    for cookie in fromCurl.cookies(for: URL(string: "https://api.example.com/v1/")!) {
        print(cookie.name, cookie.domain, cookie.path, cookie.expiresDate as Any)
    }
    fromCurl.removeAll { $0.domain.hasSuffix("tracker.example") }
    fromCurl.removeSessionCookies()
    return fromCurl
}
// end sample

@Suite struct CookiesArticleTests {
    @Test func sampleRuns() throws {
        let jar = try cookieExamples()
        #expect(jar.cookieField(for: try #require(URL(string: "https://api.example.com/v1/users"))) == "sid=abc")
        #expect(jar.cookieField(for: try #require(URL(string: "http://api.example.com/"))) == nil)
    }

    @Test func articleShowsTheSampleVerbatim() throws {
        try DocumentationSamples.check(test: #filePath, article: "Cookies.md", expected: 1)
    }
}

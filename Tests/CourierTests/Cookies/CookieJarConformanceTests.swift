import Foundation
import Testing

@testable import Courier

/// RFC 6265bis on ``CookieJar`` itself, case by case: the `Set-Cookie` fields one response to `setURL` sends, then
/// the `Cookie` field a request to `requestURL` gets (`nil`: none). Sections are those of
/// draft-ietf-httpbis-rfc6265bis (§5.6 parsing, §5.7 storage, §5.8 retrieval; §5.1 dates, domains and paths).
struct CookieJarConformanceTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var fields: [String]
        var setURL = "http://home.example.org:8888/cookie-parser?x"
        var requestURL = "http://home.example.org:8888/cookie-parser-result?x"
        var expected: String?
        var testDescription: String { name }
    }

    static let parsing: [Case] = [
        Case(name: "simple pair", fields: ["foo=bar"], expected: "foo=bar"),
        Case(name: "two fields", fields: ["foo=bar", "baz=qux"], expected: "foo=bar; baz=qux"),
        Case(name: "a comma is not a separator", fields: ["foo=bar, baz=qux"], expected: "foo=bar, baz=qux"),
        Case(name: "quotes are part of the value", fields: ["foo=\"bar, baz=qux\""], expected: "foo=\"bar, baz=qux\""),
        Case(name: "spaces around name and value trimmed", fields: ["  foo  =  bar  "], expected: "foo=bar"),
        Case(name: "tabs trimmed too", fields: ["\tfoo\t=\tbar\t; Path=/"], expected: "foo=bar"),
        Case(name: "no '=': ignored (RFC 6265)", fields: ["foo", "ok=1"], expected: "ok=1"),
        Case(name: "empty name: ignored", fields: ["=foo"], expected: nil),
        Case(name: "empty name, value with '=': ignored", fields: ["=a=bar"], expected: nil),
        Case(name: "only spaces before '=': ignored", fields: [" =bar"], expected: nil),
        Case(name: "empty name and value dropped", fields: ["="], expected: nil),
        Case(name: "empty value kept", fields: ["foo="], expected: "foo="),
        Case(name: "value keeps '='", fields: ["foo=bar=baz"], expected: "foo=bar=baz"),
        Case(name: "a control character drops the cookie", fields: ["foo=b\u{1}ar", "ok=1"], expected: "ok=1"),
        Case(name: "DEL drops the cookie", fields: ["foo=b\u{7F}ar"], expected: nil),
        Case(name: "a tab inside the value is kept", fields: ["foo=b\tar"], expected: "foo=b\tar"),
        Case(name: "unknown attributes ignored", fields: ["foo=bar; Wibble=1; Flag"], expected: "foo=bar"),
        Case(name: "attribute names ignore case", fields: ["foo=bar; pAtH=/cookie-parser-result"], expected: "foo=bar"),
        Case(name: "Secure=yes is Secure", fields: ["foo=bar; Secure=yes"], expected: nil),
        Case(name: "SECURE in capitals is Secure", fields: ["foo=bar; SECURE"], expected: nil),
        Case(name: "non-ASCII value kept", fields: ["foo=b\u{E4}r"], expected: "foo=b\u{E4}r"),
        Case(
            name: "same name, last one wins", fields: ["foo=first", "foo=second"], expected: "foo=second"),
        Case(name: "name is case-sensitive", fields: ["foo=1", "FOO=2"], expected: "foo=1; FOO=2"),
        Case(name: "empty attribute between semicolons", fields: ["foo=bar;; ;Path=/"], expected: "foo=bar"),
    ]

    static let expiry: [Case] = [
        Case(name: "Max-Age=0 deletes", fields: ["foo=bar", "foo=bar; Max-Age=0"], expected: nil),
        Case(name: "negative Max-Age deletes", fields: ["foo=bar", "foo=bar; Max-Age=-1"], expected: nil),
        Case(
            name: "Max-Age over Expires (past)", fields: ["foo=bar; Expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=60"],
            expected: "foo=bar"),
        Case(
            name: "Max-Age over Expires, whatever the order",
            fields: ["foo=bar; Max-Age=0; Expires=Fri, 01 Jan 2100 00:00:00 GMT"], expected: nil),
        Case(name: "last Max-Age wins", fields: ["foo=bar; Max-Age=0; Max-Age=60"], expected: "foo=bar"),
        Case(name: "invalid Max-Age ignored", fields: ["foo=bar; Max-Age=1x"], expected: "foo=bar"),
        Case(name: "Max-Age with a plus ignored", fields: ["foo=bar; Max-Age=+0"], expected: "foo=bar"),
        Case(name: "empty Max-Age ignored", fields: ["foo=bar; Max-Age="], expected: "foo=bar"),
        Case(
            name: "Expires in the past deletes", fields: ["foo=bar", "foo=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT"],
            expected: nil),
        Case(
            name: "Expires in the future keeps", fields: ["foo=bar; Expires=Fri, 01 Jan 2100 00:00:00 GMT"],
            expected: "foo=bar"),
        Case(name: "invalid Expires ignored", fields: ["foo=bar; Expires=never"], expected: "foo=bar"),
        Case(
            name: "two-digit year 69 is 2069", fields: ["foo=bar; Expires=Fri, 01-Jan-69 00:00:00 GMT"],
            expected: "foo=bar"),
        Case(
            name: "two-digit year 70 is 1970", fields: ["foo=bar", "foo=bar; Expires=Thu, 01-Jan-70 00:00:01 GMT"],
            expected: nil),
        Case(name: "huge Max-Age saturates", fields: ["foo=bar; Max-Age=99999999999999999999999"], expected: "foo=bar"),
    ]

    static let domains: [Case] = [
        Case(
            name: "host-only by default, not to a sibling", fields: ["foo=bar"],
            requestURL: "http://sibling.example.org:8888/", expected: nil),
        Case(
            name: "host-only not to a subdomain", fields: ["foo=bar"],
            requestURL: "http://sub.home.example.org:8888/", expected: nil),
        Case(
            name: "Domain=example.org reaches a sibling", fields: ["foo=bar; Domain=example.org"],
            requestURL: "http://sibling.example.org:8888/", expected: "foo=bar"),
        Case(
            name: "leading dot ignored", fields: ["foo=bar; Domain=.example.org"],
            requestURL: "http://sibling.example.org:8888/", expected: "foo=bar"),
        Case(
            name: "Domain matched without regard to case", fields: ["foo=bar; Domain=EXAMPLE.org"],
            requestURL: "http://sibling.example.org:8888/", expected: "foo=bar"),
        Case(
            name: "Domain equal to the host reaches subdomains", fields: ["foo=bar; Domain=home.example.org"],
            requestURL: "http://sub.home.example.org:8888/", expected: "foo=bar"),
        Case(
            name: "Domain of another site refused (injection)", fields: ["foo=bar; Domain=evil.example.com"],
            requestURL: "http://evil.example.com/", expected: nil),
        Case(
            name: "Domain of a sibling refused", fields: ["foo=bar; Domain=sibling.example.org"],
            requestURL: "http://sibling.example.org:8888/", expected: nil),
        Case(
            name: "Domain below the host refused", fields: ["foo=bar; Domain=sub.home.example.org"],
            requestURL: "http://sub.home.example.org:8888/", expected: nil),
        Case(
            name: "suffix without a dot boundary refused", fields: ["foo=bar; Domain=me.example.org"],
            requestURL: "http://me.example.org/", expected: nil),
        Case(name: "empty Domain ignored: host-only", fields: ["foo=bar; Domain="], expected: "foo=bar"),
        Case(
            name: "empty Domain after a good one: last non-empty wins",
            fields: ["foo=bar; Domain=example.org; Domain="], requestURL: "http://sibling.example.org:8888/",
            expected: "foo=bar"),
        Case(
            name: "Domain=org is a public suffix", fields: ["foo=bar; Domain=org"],
            requestURL: "http://sibling.example.org:8888/", expected: nil),
        Case(name: "Domain=.org too", fields: ["foo=bar; Domain=.org"], expected: nil),
        Case(
            name: "Domain=co.uk refused", fields: ["foo=bar; Domain=co.uk"], setURL: "http://www.example.co.uk/",
            requestURL: "http://www.example.co.uk/", expected: nil),
        Case(
            name: "Domain=example.co.uk accepted", fields: ["foo=bar; Domain=example.co.uk"],
            setURL: "http://www.example.co.uk/", requestURL: "http://shop.example.co.uk/", expected: "foo=bar"),
        Case(
            name: "private suffix github.io refused", fields: ["foo=bar; Domain=github.io"],
            setURL: "http://me.github.io/", requestURL: "http://you.github.io/", expected: nil),
        Case(
            name: "wildcard rule *.ck", fields: ["foo=bar; Domain=anything.ck"], setURL: "http://www.anything.ck/",
            requestURL: "http://www.anything.ck/", expected: nil),
        Case(
            name: "exception rule !www.ck", fields: ["foo=bar; Domain=www.ck"], setURL: "http://a.www.ck/",
            requestURL: "http://b.www.ck/", expected: "foo=bar"),
        Case(
            name: "public suffix equal to the host becomes host-only", fields: ["foo=bar; Domain=github.io"],
            setURL: "http://github.io/", requestURL: "http://github.io/", expected: "foo=bar"),
        Case(
            name: "... and then reaches no subdomain", fields: ["foo=bar; Domain=github.io"],
            setURL: "http://github.io/", requestURL: "http://me.github.io/", expected: nil),
        Case(
            name: "unlisted single label is a suffix", fields: ["foo=bar; Domain=local"],
            setURL: "http://printer.local/", requestURL: "http://scanner.local/", expected: nil),
        Case(
            name: "localhost sets host-only with Domain=localhost", fields: ["foo=bar; Domain=localhost"],
            setURL: "http://localhost/", requestURL: "http://localhost:9/", expected: "foo=bar"),
        Case(
            name: "IP host with its own address as Domain", fields: ["foo=bar; Domain=127.0.0.1"],
            setURL: "http://127.0.0.1/", requestURL: "http://127.0.0.1:9/", expected: "foo=bar"),
        Case(
            name: "another host cannot set Domain=127.0.0.1", fields: ["foo=bar; Domain=127.0.0.1"],
            setURL: "http://localhost/", requestURL: "http://127.0.0.1/", expected: nil),
        Case(
            name: "IP addresses are never domain-matched", fields: ["foo=bar; Domain=0.0.1"],
            setURL: "http://127.0.0.1/", requestURL: "http://127.0.0.1/", expected: nil),
        Case(
            name: "IPv6 host-only", fields: ["foo=bar"], setURL: "http://[::1]:8/", requestURL: "http://[::1]:9/",
            expected: "foo=bar"),
        Case(
            name: "ports do not separate cookies", fields: ["foo=bar"], requestURL: "http://home.example.org:1/",
            expected: "foo=bar"),
        Case(name: "non-ASCII Domain refused", fields: ["foo=bar; Domain=ex\u{E4}mple.org"], expected: nil),
        Case(
            name: "host-only and domain cookie of one name are two cookies",
            fields: ["foo=host", "foo=domain; Domain=home.example.org"], expected: "foo=host; foo=domain"),
    ]

    static let paths: [Case] = [
        Case(
            name: "default path is up to the last slash", fields: ["foo=bar"], setURL: "http://h.example/a/b/c",
            requestURL: "http://h.example/a/b/d", expected: "foo=bar"),
        Case(
            name: "default path does not reach above", fields: ["foo=bar"], setURL: "http://h.example/a/b/c",
            requestURL: "http://h.example/a/x", expected: nil),
        Case(
            name: "default path of /x is /", fields: ["foo=bar"], setURL: "http://h.example/x",
            requestURL: "http://h.example/", expected: "foo=bar"),
        Case(
            name: "Path=/foo reaches /foo", fields: ["foo=bar; Path=/foo"], setURL: "http://h.example/",
            requestURL: "http://h.example/foo", expected: "foo=bar"),
        Case(
            name: "Path=/foo reaches /foo/bar", fields: ["foo=bar; Path=/foo"], setURL: "http://h.example/",
            requestURL: "http://h.example/foo/bar", expected: "foo=bar"),
        Case(
            name: "Path=/foo does not reach /foobar", fields: ["foo=bar; Path=/foo"], setURL: "http://h.example/",
            requestURL: "http://h.example/foobar", expected: nil),
        Case(
            name: "Path=/foo/ does not reach /foo", fields: ["foo=bar; Path=/foo/"], setURL: "http://h.example/",
            requestURL: "http://h.example/foo", expected: nil),
        Case(
            name: "Path=/foo/ reaches /foo/bar", fields: ["foo=bar; Path=/foo/"], setURL: "http://h.example/",
            requestURL: "http://h.example/foo/bar", expected: "foo=bar"),
        Case(
            name: "Path is case-sensitive", fields: ["foo=bar; Path=/Foo"], setURL: "http://h.example/",
            requestURL: "http://h.example/foo", expected: nil),
        Case(
            name: "Path without a slash: default path", fields: ["foo=bar; Path=foo"],
            setURL: "http://h.example/a/b", requestURL: "http://h.example/a/c", expected: "foo=bar"),
        Case(
            name: "empty Path: default path", fields: ["foo=bar; Path="], setURL: "http://h.example/a/b",
            requestURL: "http://h.example/b", expected: nil),
        Case(
            name: "the query is not part of the path", fields: ["foo=bar; Path=/a"], setURL: "http://h.example/",
            requestURL: "http://h.example/a?x=/b", expected: "foo=bar"),
        Case(
            name: "percent-encoding compared as sent", fields: ["foo=bar; Path=/a%20b"], setURL: "http://h.example/",
            requestURL: "http://h.example/a%20b/c", expected: "foo=bar"),
        Case(
            name: "same name, two paths: both, longer first", fields: ["foo=root; Path=/", "foo=deep; Path=/a"],
            setURL: "http://h.example/", requestURL: "http://h.example/a/b", expected: "foo=deep; foo=root"),
    ]

    static let ordering: [Case] = [
        Case(
            name: "longer paths first", fields: ["a=1; Path=/", "b=2; Path=/x/y", "c=3; Path=/x"],
            setURL: "http://h.example/", requestURL: "http://h.example/x/y/z", expected: "b=2; c=3; a=1"),
        Case(name: "same length: older first", fields: ["z=1", "a=2", "m=3"], expected: "z=1; a=2; m=3"),
        Case(name: "replacing keeps the creation order", fields: ["a=1", "b=2", "a=3"], expected: "a=3; b=2"),
    ]

    static let secure: [Case] = [
        Case(
            name: "Secure not set over http", fields: ["foo=bar; Secure"], setURL: "http://h.example/",
            requestURL: "https://h.example/", expected: nil),
        Case(
            name: "Secure set over https, sent over https", fields: ["foo=bar; Secure"],
            setURL: "https://h.example/", requestURL: "https://h.example/", expected: "foo=bar"),
        Case(
            name: "Secure not sent over http", fields: ["foo=bar; Secure"], setURL: "https://h.example/",
            requestURL: "http://h.example/", expected: nil),
        Case(
            name: "Secure sent over wss", fields: ["foo=bar; Secure"], setURL: "https://h.example/",
            requestURL: "wss://h.example/socket", expected: "foo=bar"),
        Case(
            name: "non-Secure sent over https", fields: ["foo=bar"], setURL: "http://h.example/",
            requestURL: "https://h.example/", expected: "foo=bar"),
        Case(
            name: "SameSite=None without Secure refused", fields: ["foo=bar; SameSite=None"],
            setURL: "https://h.example/", requestURL: "https://h.example/", expected: nil),
        Case(
            name: "SameSite=None with Secure kept", fields: ["foo=bar; SameSite=None; Secure"],
            setURL: "https://h.example/", requestURL: "https://h.example/", expected: "foo=bar"),
        Case(
            name: "SameSite=Strict sent (no cross-site requests here)", fields: ["foo=bar; SameSite=Strict"],
            setURL: "http://h.example/", requestURL: "http://h.example/", expected: "foo=bar"),
        Case(
            name: "HttpOnly sent", fields: ["foo=bar; HttpOnly"], setURL: "http://h.example/",
            requestURL: "http://h.example/", expected: "foo=bar"),
    ]

    static let prefixes: [Case] = [
        Case(
            name: "__Secure- needs Secure", fields: ["__Secure-foo=bar"], setURL: "https://h.example/",
            requestURL: "https://h.example/", expected: nil),
        Case(
            name: "__Secure- with Secure over https", fields: ["__Secure-foo=bar; Secure"],
            setURL: "https://h.example/", requestURL: "https://h.example/", expected: "__Secure-foo=bar"),
        Case(
            name: "__secure- checked without regard to case", fields: ["__secure-foo=bar"],
            setURL: "https://h.example/", requestURL: "https://h.example/", expected: nil),
        Case(
            name: "__Host- with Secure, Path=/ and no Domain", fields: ["__Host-foo=bar; Secure; Path=/"],
            setURL: "https://h.example/a/b", requestURL: "https://h.example/", expected: "__Host-foo=bar"),
        Case(
            name: "__Host- with a Domain refused", fields: ["__Host-foo=bar; Secure; Path=/; Domain=h.example"],
            setURL: "https://h.example/", requestURL: "https://h.example/", expected: nil),
        Case(
            name: "__Host- without Path refused", fields: ["__Host-foo=bar; Secure"],
            setURL: "https://h.example/", requestURL: "https://h.example/", expected: nil),
        Case(
            name: "__Host- with another Path refused", fields: ["__Host-foo=bar; Secure; Path=/a"],
            setURL: "https://h.example/", requestURL: "https://h.example/a", expected: nil),
        Case(
            name: "__Host- without Secure refused", fields: ["__Host-foo=bar; Path=/"],
            setURL: "https://h.example/", requestURL: "https://h.example/", expected: nil),
        Case(
            name: "nameless cookie cannot fake a prefix", fields: ["=__Host-foo=bar"],
            setURL: "https://h.example/", requestURL: "https://h.example/", expected: nil),
    ]

    /// Every case above whose URLs are plain `http` (the CLI's run goes through a plain proxy).
    static var allPlainHTTP: [Case] {
        (parsing + expiry + domains + paths + ordering + secure + prefixes).filter {
            $0.setURL.hasPrefix("http:") && $0.requestURL.hasPrefix("http:")
        }
    }

    private func run(_ test: Case) throws {
        let jar = CookieJar()
        jar.storeCookies(fromSetCookieFields: test.fields, for: try #require(URL(string: test.setURL)))
        #expect(jar.cookieField(for: try #require(URL(string: test.requestURL))) == test.expected)
    }

    @Test(arguments: parsing) func parsingCase(_ test: Case) throws { try run(test) }
    @Test(arguments: expiry) func expiryCase(_ test: Case) throws { try run(test) }
    @Test(arguments: domains) func domainsCase(_ test: Case) throws { try run(test) }
    @Test(arguments: paths) func pathsCase(_ test: Case) throws { try run(test) }
    @Test(arguments: ordering) func orderingCase(_ test: Case) throws { try run(test) }
    @Test(arguments: secure) func secureCase(_ test: Case) throws { try run(test) }
    @Test(arguments: prefixes) func prefixesCase(_ test: Case) throws { try run(test) }

    /// §5.7 step 16: a plain-http response may not overwrite a Secure cookie, nor set one that would shadow it.
    @Test func leaveSecureCookiesAlone() throws {
        let jar = CookieJar()
        let secure = try #require(URL(string: "https://www.example.org/"))
        let plain = try #require(URL(string: "http://www.example.org/"))
        #expect(jar.setCookie("sid=good; Secure; Domain=example.org; Path=/", for: secure))
        #expect(!jar.setCookie("sid=evil", for: plain))  // same name, the host under its domain
        #expect(!jar.setCookie("sid=evil; Path=/deep", for: plain))  // a path under its path
        #expect(!jar.setCookie("sid=evil; Domain=example.org", for: plain))
        #expect(jar.cookieField(for: secure) == "sid=good")
        #expect(jar.setCookie("other=fine", for: plain))
        // Over https, replacing it is allowed.
        #expect(jar.setCookie("sid=newer; Secure; Domain=example.org; Path=/", for: secure))
        #expect(jar.cookieField(for: secure) == "sid=newer; other=fine")  // it keeps the first one's creation date
    }

    /// §5.6: a name and value over 4,096 bytes together is ignored; an attribute over 1,024 bytes alone is.
    @Test func sizeLimits() throws {
        let jar = CookieJar()
        let url = try #require(URL(string: "http://h.example/"))
        #expect(jar.setCookie("n=" + String(repeating: "v", count: 4094), for: url))
        #expect(!jar.setCookie("m=" + String(repeating: "v", count: 4096), for: url))
        #expect(jar.setCookie("p=1; Path=/" + String(repeating: "a", count: 1100), for: url))
        #expect(jar.cookies(for: url).map(\.name) == ["n", "p"])  // the long Path was ignored: default path
        #expect(jar.cookies.first { $0.name == "p" }?.path == "/")
    }

    /// Max-Age and Expires never keep a cookie more than 400 days (§5.6.1, §5.6.2).
    @Test func lifetimeIsCappedAt400Days() throws {
        let jar = CookieJar()
        let url = try #require(URL(string: "http://h.example/"))
        jar.setCookie("a=1; Max-Age=999999999", for: url)
        jar.setCookie("b=1; Expires=Fri, 01 Jan 9999 00:00:00 GMT", for: url)
        let limit = Date().addingTimeInterval(400 * 86_400 + 5)
        for cookie in jar.cookies { #expect(try #require(cookie.expiresDate) <= limit) }
    }

    /// An expired cookie is removed at once: not sent, not listed, not saved, even before anything else happens.
    @Test func expiryRemovesAtOnce() async throws {
        let jar = CookieJar()
        let url = try #require(URL(string: "http://h.example/"))
        jar.setCookie("short=1; Max-Age=1", for: url)
        jar.setCookie("long=1; Max-Age=600", for: url)
        #expect(jar.cookieField(for: url) == "short=1; long=1")
        try await Task.sleep(for: .milliseconds(1100))
        #expect(jar.cookies.map(\.name) == ["long"])
        #expect(jar.cookieField(for: url) == "long=1")
        #expect(!jar.netscapeFileText.contains("short"))
    }

    /// 50 cookies a domain, 3,000 in all by default; past either, the least recently used go first.
    @Test func limitsEvictTheLeastRecentlyUsed() throws {
        let jar = CookieJar(maximumCookiesPerDomain: 3, maximumCookies: 5)
        let a = try #require(URL(string: "http://a.example/"))
        let b = try #require(URL(string: "http://b.example/"))
        jar.setCookie("a1=1", for: a)
        jar.setCookie("a2=1", for: a)
        jar.setCookie("a3=1", for: a)
        _ = jar.cookieField(for: a)  // uses all three
        jar.setCookie("a4=1", for: a)  // a1, a2, a3 used at once: the first listed of them goes
        #expect(jar.cookies(for: a).count == 3)
        #expect(jar.cookies(for: a).contains { $0.name == "a4" })
        jar.setCookie("b1=1", for: b)
        jar.setCookie("b2=1", for: b)
        jar.setCookie("b3=1", for: b)  // 6 in all: the least recently used of a's goes
        #expect(jar.cookies.count == 5)
        #expect(jar.cookies(for: b).count == 3)
        let defaults = CookieJar()
        #expect(defaults.maximumCookiesPerDomain == 50)
        #expect(defaults.maximumCookies == 3000)
        for index in 0..<60 { defaults.setCookie("c\(index)=1", for: a) }
        #expect(defaults.cookies.count == 50)
        #expect(defaults.cookies(for: a).contains { $0.name == "c59" })
        #expect(!defaults.cookies(for: a).contains { $0.name == "c0" })
    }

    /// Many threads storing and reading at once: every cookie stored is there at the end, nothing is lost.
    @Test func concurrentUse() async throws {
        let jar = CookieJar(maximumCookiesPerDomain: 1000, maximumCookies: 10_000)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    let url = URL(string: "http://w\(worker).example/")!
                    for index in 0..<200 {
                        jar.setCookie("c\(index)=\(worker)", for: url)
                        _ = jar.cookieField(for: url)
                    }
                }
            }
        }
        #expect(jar.cookies.count == 1600)
        #expect(jar.cookieField(for: try #require(URL(string: "http://w3.example/")))?.hasPrefix("c0=3; c1=3") == true)
    }

    /// The jar is `Codable` as the array of its cookies, every field kept.
    @Test func codableRoundTrip() throws {
        let jar = CookieJar()
        let url = try #require(URL(string: "https://www.example.org/app/x"))
        jar.setCookie("a=1; Domain=example.org; Secure; HttpOnly; SameSite=Lax; Max-Age=600", for: url)
        jar.setCookie("b=2", for: url)
        let data = try JSONEncoder().encode(jar)
        let copy = try JSONDecoder().decode(CookieJar.self, from: data)
        #expect(copy.cookies == jar.cookies)
        #expect(copy.cookieField(for: url) == jar.cookieField(for: url))
        #expect(copy.cookies.first { $0.name == "a" }?.sameSite == .lax)
    }

    /// URLSession joins repeated `Set-Cookie` fields with ", "; splitting them again must keep dates and quoted
    /// values whole.
    @Test func splittingJoinedFields() {
        #expect(
            SetCookie.splitJoined("a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT, b=2; Path=/, c=\"x, d=y\"")
                == ["a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT", "b=2; Path=/", "c=\"x, d=y\""])
        #expect(SetCookie.splitJoined("a=1") == ["a=1"])
        #expect(SetCookie.splitJoined("a=1, 2") == ["a=1, 2"])  // no name after the comma: one cookie
    }
}

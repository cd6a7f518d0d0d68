import Foundation
import Testing

@testable import Courier

/// How proxies are read from URLs and the environment, and which hosts `NO_PROXY` sends direct.
@Suite struct ProxySettingsTests {
    private func proxy(_ settings: ProxySettings?, _ url: String) throws -> Proxy? {
        try settings?.proxy(for: URL(string: url)!)
    }

    @Test func proxyURLs() throws {
        let http = try Proxy(url: "http://alice:s%40cret@proxy.example:3128")
        #expect(http.kind == .http && http.host == "proxy.example" && http.port == 3128)
        #expect(http.username == "alice" && http.password == "s@cret")
        #expect(!http.description.contains("cret"))
        #expect(try Proxy(url: "proxy.example").port == 80)
        #expect(try Proxy(url: "socks5h://[::1]").port == 1080)
        #expect(try Proxy(url: "socks5h://[::1]").host == "::1")
        #expect(try Proxy(url: "socks5://10.0.0.1:1081").kind == .socks5)
        for bad in ["ftp://proxy:21", "http://:8080", "http://proxy:0", "http://proxy:70000", "http://u:p@"] {
            #expect(throws: CourierError.self, "\(bad)") { try Proxy(url: bad) }
        }
        do {
            _ = try Proxy(url: "gopher://alice:topsecret@proxy:70")
        } catch let error as CourierError {
            #expect(!error.localizedDescription.contains("topsecret"))
        }
        #expect(Proxy.redacted("http://alice:topsecret@proxy:1") == "http://alice:***@proxy:1")
    }

    @Test("The configuration's default proxies: the environment's on Linux, the system's (nil) on Apple platforms")
    func platformDefault() throws {
        let environment = ["http_proxy": "http://proxy.example:3128", "no_proxy": "localhost"]
        #if canImport(Darwin)
            #expect(ProxySettings.platformDefault(environment) == nil)
        #else
            let settings = try #require(ProxySettings.platformDefault(environment))
            #expect(settings == ProxySettings.environment(environment))
            #expect(try proxy(settings, "http://example.com/")?.host == "proxy.example")
            #expect(try proxy(settings, "http://localhost/") == nil)
        #endif
        #expect(SessionConfiguration().proxy == ProxySettings.platformDefault())
    }

    @Test func environmentVariables() throws {
        let lower = ProxySettings.environment(["http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:2"])
        #expect(try proxy(lower, "http://example.com/")?.host == "lower")
        #expect(try proxy(lower, "https://example.com/") == nil)
        let upper = ProxySettings.environment(["HTTP_PROXY": "http://upper:2", "HTTPS_PROXY": "socks5://s:3"])
        #expect(try proxy(upper, "http://example.com/")?.host == "upper")
        #expect(try proxy(upper, "wss://example.com/")?.kind == .socks5)
        // httpoxy: in a CGI program, HTTP_PROXY may come from the request.
        let cgi = ProxySettings.environment(["HTTP_PROXY": "http://evil:2", "REQUEST_METHOD": "GET"])
        #expect(cgi == nil)
        let all = ProxySettings.environment(["ALL_PROXY": "http://all:4", "https_proxy": "http://tls:5"])
        #expect(try proxy(all, "http://example.com/")?.host == "all")
        #expect(try proxy(all, "https://example.com/")?.host == "tls")
        #expect(ProxySettings.environment(["http_proxy": "", "no_proxy": "*"]) == nil)
        #expect(ProxySettings.environment([:]) == nil)
        // A variable that is no proxy fails the requests it applies to instead of sending them direct.
        let broken = ProxySettings.environment(["https_proxy": "ftp://alice:topsecret@x", "http_proxy": "http://ok:1"])
        #expect(try proxy(broken, "http://example.com/")?.host == "ok")
        #expect(throws: CourierError.self) { try proxy(broken, "https://example.com/") }
        do {
            _ = try proxy(broken, "https://example.com/")
        } catch let error as CourierError {
            #expect(error.localizedDescription.contains("https_proxy"))
            #expect(!error.localizedDescription.contains("topsecret"))
        }
    }

    @Test(
        "NO_PROXY entries",
        arguments: [
            ("*", "http://anything.example/", true),
            ("example.com", "http://example.com/", true),
            ("example.com", "http://api.EXAMPLE.com./", true),
            ("example.com", "http://badexample.com/", false),
            (".example.com", "http://example.com/", true),
            (".example.com", "http://a.b.example.com/", true),
            ("example.com:8080", "http://example.com:8080/", true),
            ("example.com:8080", "http://example.com/", false),
            ("10.0.0.0/8", "http://10.20.30.40/", true),
            ("10.0.0.0/8", "http://11.0.0.1/", false),
            ("192.168.1.5", "http://192.168.1.5:99/", true),
            ("::1", "http://[::1]:8080/", true),
            ("[::1]:8080", "http://[::1]:8080/", true),
            ("[::1]:8080", "http://[::1]:8081/", false),
            ("fd00::/8", "https://[fd12::1]/", true),
            ("localhost, other.example", "http://other.example/", true),
            ("127.0.0.1", "http://127.0.0.2/", false),
            ("", "http://example.com/", false),
        ])
    func noProxy(rule: String, url: String, direct: Bool) throws {
        let settings = ProxySettings.environment(["all_proxy": "http://proxy:1", "NO_PROXY": rule])
        #expect(try proxy(settings, url) == nil ? direct : !direct, "\(rule) vs \(url)")
    }
}

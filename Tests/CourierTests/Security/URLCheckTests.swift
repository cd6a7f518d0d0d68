import Foundation
import Testing

@testable import Courier

/// The URL check every request passes: schemes, hosts and ports read from the URL's own text.
struct URLCheckTests {
    @Test(arguments: [
        "http://h/", "https://h:443/x", "http://h:/", "http://127.0.0.1:65535/", "http://[::1]:8080/",
        "http://u:p@h:80/x?y#z", "HTTP://H:00080/", "https://[::1]/",
    ])
    func accepted(_ string: String) throws {
        let url = try #require(URL(string: string))
        try URLCheck.validate(url, allowsUnixSockets: false)
    }

    @Test(arguments: [
        "http://h:0/", "http://h:65536/", "http://h:70000/", "http://[::1]:99999/", "http://h:8x/",
        "http://u:p@h:123456/", "http://:80/", "http:/nohost",
    ])
    func refusedWithInvalidURL(_ string: String) throws {
        guard let url = URL(string: string) else { return }  // Foundation refusing it is as good
        #expect(throws: CourierError.self) { try URLCheck.validate(url, allowsUnixSockets: false) }
        do {
            try URLCheck.validate(url, allowsUnixSockets: false)
        } catch let error as CourierError {
            #expect(error.errorCode == -1000, "\(string): \(error)")
        }
    }

    @Test func schemes() throws {
        for string in ["ftp://h/", "file:///etc/passwd", "unix:///tmp/s.sock", "http+unix://%2Ftmp%2Fs/x"] {
            let url = try #require(URL(string: string))
            do {
                try URLCheck.validate(url, allowsUnixSockets: false)
                Issue.record("\(string) passed")
            } catch let error as CourierError {
                #expect(error.errorCode == -1002, "\(string): \(error)")
            }
            #expect(!URLCheck.hasWebScheme(url))
        }
        try URLCheck.validate(try #require(URL(string: "http+unix://%2Ftmp%2Fs/x")), allowsUnixSockets: true)
        #expect(URLCheck.hasWebScheme(try #require(URL(string: "HTTPS://h/"))))
    }
}

/// Where a credential may go, compared field by field rather than through a URL made from its parts.
struct ProtectionSpaceTests {
    @Test func containsItsOriginOnly() throws {
        let space = Credential.ProtectionSpace(scheme: "https", host: "::1", port: 8443, realm: "r")
        #expect(space.contains(try #require(URL(string: "https://[::1]:8443/x")), realm: "r"))
        #expect(!space.contains(try #require(URL(string: "https://[::1]:8443/x")), realm: "other"))
        #expect(!space.contains(try #require(URL(string: "http://[::1]:8443/x")), realm: "r"))
        #expect(!space.contains(try #require(URL(string: "https://[::2]:8443/x")), realm: "r"))
        let defaultPort = Credential.ProtectionSpace(scheme: "HTTPS", host: "Example.COM")
        #expect(defaultPort.contains(try #require(URL(string: "https://example.com:443/")), realm: nil))
        #expect(!defaultPort.contains(try #require(URL(string: "https://example.com:444/")), realm: nil))
    }
}

import Courier
import Foundation

/// `--connect-to HOST:PORT:HOST2:PORT2`, curl's: requests to HOST on PORT connect to HOST2 on PORT2 instead, while
/// the URL's host is kept for `Host`, SNI and the certificate check. Any part may be empty: an empty HOST or PORT
/// matches any, an empty HOST2 or PORT2 keeps the request's. An IPv6 address goes in brackets (`[::1]`).
struct ConnectToRule: Sendable, Hashable {
    var route: NIOTransport.ConnectionRoute

    /// Parses `HOST:PORT:HOST2:PORT2`.
    ///
    /// - Throws: ``CommandFailure`` naming the value and the form, for a missing part, a port outside 1–65535, an
    ///   unclosed bracket or a host with spaces or control characters.
    init(_ text: String) throws {
        func failure(_ why: String) -> CommandFailure {
            CommandFailure(
                .failure,
                "--connect-to “\(TerminalText.escape(text, keepingLineBreaks: false))”: \(why); use HOST:PORT:HOST2:PORT2"
            )
        }
        var rest = Substring(text)
        func host() throws -> String? {
            let name: Substring
            if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]") else { throw failure("a “[” is not closed") }
                name = rest[rest.index(after: rest.startIndex)..<close]
                rest = rest[rest.index(after: close)...]
            } else {
                let end = rest.firstIndex(of: ":") ?? rest.endIndex
                name = rest[..<end]
                rest = rest[end...]
            }
            guard
                !name.unicodeScalars.contains(where: {
                    $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F
                })
            else { throw failure("a host cannot have spaces or control characters") }
            return name.isEmpty ? nil : String(name)
        }
        func colon() throws {
            guard rest.first == ":" else { throw failure("it needs four parts separated by “:”") }
            rest.removeFirst()
        }
        func port(last: Bool) throws -> Int? {
            let end = last ? rest.endIndex : rest.firstIndex(of: ":") ?? rest.endIndex
            let digits = rest[..<end]
            rest = rest[end...]
            if digits.isEmpty { return nil }
            guard digits.allSatisfy(\.isASCII), let port = Int(digits), (1...65535).contains(port) else {
                throw failure("a port must be empty or a number from 1 to 65535")
            }
            return port
        }
        let host1 = try host()
        try colon()
        let port1 = try port(last: false)
        try colon()
        let host2 = try host()
        try colon()
        let port2 = try port(last: true)
        guard
            let route = NIOTransport.ConnectionRoute(host: host1, port: port1, targetHost: host2, targetPort: port2)
        else { throw failure("a port must be a number from 1 to 65535") }
        self.route = route
    }
}

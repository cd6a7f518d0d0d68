import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--resolve HOST:PORT:ADDR`, curl's: requests to HOST on PORT connect to ADDR, while the URL's host is kept for
/// `Host`, SNI and the certificate check.
struct ResolveRule: Sendable, Hashable {
    /// Lower-cased, as URLs compare hosts.
    var host: String
    var port: Int
    /// An IPv4 or IPv6 address, without brackets.
    var address: String

    /// Parses `HOST:PORT:ADDR`; ADDR may be an IPv6 address, bracketed or not (`example.com:443:[::1]`).
    ///
    /// - Throws: ``CommandFailure`` naming the value and the form, for a missing part, a port outside 1–65535 or an
    ///   address that is not an IP address.
    init(_ text: String) throws {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        func failure(_ why: String) -> CommandFailure {
            CommandFailure(
                .failure,
                "--resolve “\(TerminalText.escape(text, keepingLineBreaks: false))”: \(why); use HOST:PORT:ADDR")
        }
        guard parts.count == 3, !parts[0].isEmpty else { throw failure("it needs a host, a port and an address") }
        guard let port = Int(parts[1]), (1...65535).contains(port) else {
            throw failure("the port must be a number from 1 to 65535")
        }
        var address = String(parts[2])
        if address.hasPrefix("["), address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        guard Self.isIPAddress(address) else { throw failure("“\(address)” is not an IPv4 or IPv6 address") }
        host = parts[0].lowercased()
        self.port = port
        self.address = address
    }

    /// The addresses `NIOTransport` connects to for `url`: the rules for its host and port (its scheme's default
    /// when it has none).
    static func hostAddresses(_ rules: [ResolveRule], for url: URL?) -> [String: String] {
        guard let url, let host = url.host else { return [:] }
        return hostAddresses(rules, host: host, port: url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80))
    }

    /// The addresses `NIOTransport` connects to for `host` on `port`: the rules for them.
    static func hostAddresses(_ rules: [ResolveRule], host: String, port: Int) -> [String: String] {
        let host = host.lowercased()
        var addresses: [String: String] = [:]
        for rule in rules where rule.host == host && rule.port == port { addresses[host] = rule.address }
        return addresses
    }

    private static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}

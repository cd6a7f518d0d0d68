import Foundation

/// What the cookie rules read of a request's URL (RFC 6265bis §5.1.2–§5.1.4): the canonical host, whether it is an
/// IP address, the path, and whether the scheme is a secure one; and the matching rules on those.
struct CookieRequest {
    /// Lowercase, without the brackets of an IPv6 literal or a trailing dot.
    let host: String
    let isIP: Bool
    /// The path as sent, percent-encoding kept; `/` when empty.
    let path: String
    /// `https` or `wss`.
    let isSecure: Bool

    /// `nil` for a URL without a host or with a scheme cookies do not go over.
    init?(_ url: URL) {
        guard let scheme = url.scheme, var host = url.host, !host.isEmpty else { return nil }
        switch scheme {
        case "http", "ws": isSecure = false
        case "https", "wss": isSecure = true
        default:
            switch scheme.lowercased() {
            case "http", "ws": isSecure = false
            case "https", "wss": isSecure = true
            default: return nil
            }
        }
        if host.utf8.contains(where: { (0x41...0x5A).contains($0) }) { host = host.lowercased() }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix("."), host.count > 1 { host.removeLast() }
        self.host = host
        // Only a name ending in a digit can be an IPv4 address (a top-level domain is never numeric).
        isIP =
            host.contains(":")
            || (host.utf8.last.map { (0x30...0x39).contains($0) } == true && IPAddress.bytes(host) != nil)
        let path = url.path(percentEncoded: true)
        self.path = path.isEmpty ? "/" : path
    }

    /// The domains whose cookies may go to the host: itself, then each domain above it but the top-level one, for
    /// which the jar never stores a cookie (it is a public suffix); none above an IP address.
    var candidateDomains: [String] {
        guard !isIP else { return [host] }
        var domains = [host]
        let bytes = host.utf8
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        for dot in dots.dropLast() { domains.append(String(host[bytes.index(after: dot)...])) }
        return domains
    }

    /// §5.1.3: the host is the domain, or a name (not an IP address) that ends in `.` and the domain.
    static func domain(_ domain: String, matchesHost host: String, hostIsIP: Bool) -> Bool {
        if host == domain { return true }
        guard !hostIsIP, host.utf8.count > domain.utf8.count, host.utf8.hasSuffix(domain.utf8) else { return false }
        let boundary = host.utf8.index(host.utf8.endIndex, offsetBy: -domain.utf8.count - 1)
        return host.utf8[boundary] == UInt8(ascii: ".")
    }

    /// §5.1.4: the paths are the same, or the cookie's is a prefix of the request's ending at a `/` (its own last
    /// character or the request's next one).
    static func path(_ requestPath: String, matches cookiePath: String) -> Bool {
        let request = requestPath.utf8
        let cookie = cookiePath.utf8
        guard request.starts(with: cookie) else { return false }
        if request.count == cookie.count || cookie.last == UInt8(ascii: "/") { return true }
        return request[request.index(request.startIndex, offsetBy: cookie.count)] == UInt8(ascii: "/")
    }

    /// §5.1.4: the request path up to its last `/`, or `/` when that leaves nothing (or the path has one `/` only).
    static func defaultPath(_ requestPath: String) -> String {
        guard requestPath.hasPrefix("/"), let last = requestPath.lastIndex(of: "/"), last != requestPath.startIndex
        else { return "/" }
        return String(requestPath[..<last])
    }
}

extension String.UTF8View {
    fileprivate func hasSuffix(_ suffix: String.UTF8View) -> Bool {
        count >= suffix.count && self[index(endIndex, offsetBy: -suffix.count)...].elementsEqual(suffix)
    }
}

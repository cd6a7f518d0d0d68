import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The checks every URL passes before a request is sent to it: a scheme Courier sends to, a host, and a port that
/// fits in 16 bits.
///
/// A URL reaches the transport from a caller, a serializer, a base URL, a redirect's `Location` or a hook, so the
/// session checks it before each exchange, whatever its source. The transports would otherwise trap or wrap on
/// what a server wrote: NIO's `SocketAddress` traps on a port above 65535, and a host name with one connects to the
/// port modulo 65536.
enum URLCheck {
    /// The schemes a request may use, and the only ones a redirect may lead to.
    static let webSchemes: Set<String> = ["http", "https"]
    /// AsyncHTTPClient's schemes for Unix-domain sockets: only for a request the caller makes, and only when
    /// ``SessionConfiguration/allowsUnixSocketURLs`` says so.
    static let unixSocketSchemes: Set<String> = ["http+unix", "https+unix", "unix"]

    /// Throws unless a request may be sent to `url`.
    ///
    /// - Throws: ``CourierError/unsupportedURL(_:reason:context:)`` for a scheme other than `http` and `https`
    ///   (a Unix-socket scheme passes when `allowsUnixSockets`); ``CourierError/invalidURL(_:)`` for a missing
    ///   host or a port that is not a number from 1 to 65535.
    static func validate(_ url: URL, allowsUnixSockets: Bool, request: URLRequest? = nil) throws {
        let scheme = url.scheme?.lowercased() ?? ""
        let context = CourierError.Context(request: request)
        if unixSocketSchemes.contains(scheme) {
            guard allowsUnixSockets else {
                throw CourierError.unsupportedURL(
                    url,
                    reason: "requests to Unix-domain sockets are allowed only when the session's configuration sets "
                        + "allowsUnixSocketURLs", context: context)
            }
            return
        }
        guard webSchemes.contains(scheme) else {
            throw CourierError.unsupportedURL(
                url, reason: "the scheme “\(scheme)” is not http or https", context: context)
        }
        try validateAuthority(of: url)
    }

    /// Throws unless `url` has a host (for `http` and `https`) and, when it names one, a port from 1 to 65535. The port is read from the URL's text: Foundation's `URL.port` may wrap or drop a large one.
    static func validateAuthority(of url: URL) throws {
        let text = url.absoluteString
        guard let schemeEnd = text.range(of: "://") else {
            if webSchemes.contains(url.scheme?.lowercased() ?? "") { throw CourierError.invalidURL(text) }
            return
        }
        let rest = text[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostAndPort = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        let portText: Substring?
        let host: Substring
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { throw CourierError.invalidURL(text) }
            host = hostAndPort[hostAndPort.startIndex...close]
            let after = hostAndPort[hostAndPort.index(after: close)...]
            if after.isEmpty {
                portText = nil
            } else if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else {
                throw CourierError.invalidURL(text)
            }
        } else if let colon = hostAndPort.lastIndex(of: ":") {
            host = hostAndPort[..<colon]
            portText = hostAndPort[hostAndPort.index(after: colon)...]
        } else {
            host = hostAndPort
            portText = nil
        }
        if host.isEmpty, webSchemes.contains(url.scheme?.lowercased() ?? "") { throw CourierError.invalidURL(text) }
        if let portText, !portText.isEmpty {
            guard isPort(portText) else { throw CourierError.invalidURL(text) }
        }
    }

    /// Whether `text` is a decimal port from 1 to 65535 (leading zeros allowed, as in URLs).
    static func isPort(_ text: Substring) -> Bool {
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return false }
        let digits = text.drop { $0 == "0" }
        guard digits.count <= 5, let value = Int(digits) else { return false }
        return (1...65535).contains(value)
    }

    /// Whether a redirect may lead to `url`: `http` or `https` only, never a Unix socket or another scheme.
    static func isRedirectTarget(_ url: URL) -> Bool {
        webSchemes.contains(url.scheme?.lowercased() ?? "")
    }
}

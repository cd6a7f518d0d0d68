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
    /// AsyncHTTPClient's schemes for Unix-domain sockets: only for a request the caller makes, and only when
    /// ``SessionConfiguration/allowsUnixSocketURLs`` says so.
    static let unixSocketSchemes: Set<String> = ["http+unix", "https+unix", "unix"]

    /// Throws unless a request may be sent to `url`.
    ///
    /// - Throws: ``CourierError/unsupportedURL(_:reason:context:)`` for a scheme other than `http` and `https`
    ///   (a Unix-socket scheme passes when `allowsUnixSockets`); ``CourierError/invalidURL(_:)`` for a missing
    ///   host or a port that is not a number from 1 to 65535.
    static func validate(_ url: URL, allowsUnixSockets: Bool, request: URLRequest? = nil) throws {
        if hasWebScheme(url) {
            try validateAuthority(of: url)
            return
        }
        let scheme = url.scheme ?? ""
        let context = CourierError.Context(request: request)
        guard unixSocketSchemes.contains(scheme.lowercased()) else {
            throw CourierError.unsupportedURL(
                url, reason: "the scheme “\(scheme)” is not http or https", context: context)
        }
        guard allowsUnixSockets else {
            throw CourierError.unsupportedURL(
                url,
                reason: "requests to Unix-domain sockets are allowed only when the session's configuration sets "
                    + "allowsUnixSocketURLs", context: context)
        }
    }

    /// Throws unless `url` has a host (for `http` and `https`) and, when it names one, a port from 1 to 65535.
    ///
    /// The port is read from the URL's text, byte by byte (this runs for every request): Foundation's `URL.port`
    /// may wrap or drop a large one.
    static func validateAuthority(of url: URL) throws {
        let text = url.absoluteString
        let isWeb = scheme(of: text).flatMap(webScheme) != nil
        var bytes = text.utf8[...]
        // The authority starts after "scheme://".
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        bytes = bytes[bytes.index(after: colon)...]
        guard bytes.starts(with: "//".utf8) else {
            if isWeb { throw CourierError.invalidURL(text) }
            return
        }
        bytes = bytes.dropFirst(2)
        let authority = bytes.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        let hostAndPort =
            authority.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] } ?? authority
        var host = hostAndPort
        var port: Substring.UTF8View.SubSequence?
        if hostAndPort.first == UInt8(ascii: "[") {
            guard let close = hostAndPort.firstIndex(of: UInt8(ascii: "]")) else { throw CourierError.invalidURL(text) }
            host = hostAndPort[...close]
            let after = hostAndPort[hostAndPort.index(after: close)...]
            if let first = after.first {
                guard first == UInt8(ascii: ":") else { throw CourierError.invalidURL(text) }
                port = after.dropFirst()
            }
        } else if let colon = hostAndPort.lastIndex(of: UInt8(ascii: ":")) {
            host = hostAndPort[..<colon]
            port = hostAndPort[hostAndPort.index(after: colon)...]
        }
        if host.isEmpty, isWeb { throw CourierError.invalidURL(text) }
        if let port, !port.isEmpty, !isPort(port) { throw CourierError.invalidURL(text) }
    }

    /// Whether `digits` is a decimal port from 1 to 65535 (leading zeros allowed, as in URLs).
    static func isPort<Digits: Collection<UInt8>>(_ digits: Digits) -> Bool {
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return false }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
            if value > 65535 { return false }
        }
        return value >= 1
    }

    /// Whether `url` is `http` or `https`: the only schemes a redirect may lead to (never a Unix socket or another
    /// protocol), and the only ones a request may start early with.
    static func hasWebScheme(_ url: URL) -> Bool {
        scheme(of: url.absoluteString).flatMap(webScheme) != nil
    }

    /// Whether `url` is `https`, in any case.
    static func isHTTPS(_ url: URL) -> Bool {
        scheme(of: url.absoluteString).flatMap(webScheme) == .https
    }

    /// The port a URL of `scheme` without one means: 443 for `https` and `wss`, 80 otherwise.
    static func defaultPort(scheme: String?) -> Int {
        switch scheme?.lowercased() {
        case "https", "wss": 443
        default: 80
        }
    }

    /// Whether `url` is plain `http`, in any case.
    static func isPlainHTTP(_ url: URL) -> Bool {
        scheme(of: url.absoluteString).flatMap(webScheme) == .http
    }

    /// `http` and `https`: the schemes a request may use, and the only ones a redirect may lead to.
    private enum WebScheme { case http, https }

    /// `scheme` as one of the web schemes, compared byte by byte in any case (this runs several times a request).
    private static func webScheme(_ scheme: Substring) -> WebScheme? {
        let utf8 = scheme.utf8
        guard utf8.count == 4 || utf8.count == 5 else { return nil }
        var index = utf8.startIndex
        for expected in "https".utf8.prefix(utf8.count) {
            guard utf8[index] | 0x20 == expected else { return nil }
            index = utf8.index(after: index)
        }
        return utf8.count == 4 ? .http : .https
    }

    /// The scheme of an absolute URL's text, as `URL.scheme` gives it (a letter, then letters, digits, `+`, `-` or
    /// `.`, up to the first colon), or `nil` when it has none. Read from the text because Foundation's `URL.scheme`
    /// makes a new string on each call, and every request asks several times.
    static func scheme(of text: String) -> Substring? {
        var end = text.utf8.startIndex
        for byte in text.utf8 {
            if byte == UInt8(ascii: ":") {
                return end == text.utf8.startIndex ? nil : Substring(text.utf8[..<end])
            }
            let isLetter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            let isOther =
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            guard isLetter || (isOther && end != text.utf8.startIndex) else { return nil }
            end = text.utf8.index(after: end)
        }
        return nil
    }
}

import Foundation

/// A proxy a request goes through (see ``ProxySettings``): an HTTP proxy (plain `http` requests are sent to it in
/// absolute form, `https` ones through a `CONNECT` tunnel) or a SOCKS5 proxy (a tunnel for both).
///
/// Its credentials go to the proxy only: in `Proxy-Authorization` (HTTP) or the SOCKS handshake, never to the origin
/// server. ``description`` never shows the password.
public struct Proxy: Sendable, Hashable, CustomStringConvertible {
    /// The proxy protocol.
    public enum Kind: Sendable, Hashable {
        /// An HTTP proxy (`http://` in a proxy URL).
        case http
        /// A SOCKS5 proxy (`socks5://` or `socks5h://`); host names are resolved by the proxy.
        case socks5
    }

    /// The protocol.
    public var kind: Kind
    /// The proxy's host name or address.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// The user name for the proxy, if it wants one.
    public var username: String?
    /// The password for the proxy.
    public var password: String?

    /// A proxy at `host:port`.
    public init(kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// A proxy from a URL as the environment variables and `curl -x` write one: `http://user:password@host:3128`,
    /// `socks5://host:1080` or `socks5h://…`; without a scheme, `http`. The port defaults to 80 for `http` and 1080
    /// for SOCKS. User and password are percent-decoded.
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` for a URL without a host, with a port outside 1…65535, or with
    ///   another scheme (the message never shows the password).
    public init(url string: String) throws {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let components = URLComponents(string: withScheme), let host = components.host, !host.isEmpty else {
            throw CourierError.invalidURL(Self.redacted(trimmed))
        }
        switch components.scheme?.lowercased() {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        default: throw CourierError.invalidURL(Self.redacted(trimmed))
        }
        let port = components.port ?? (kind == .http ? 80 : 1080)
        guard (1...65535).contains(port) else { throw CourierError.invalidURL(Self.redacted(trimmed)) }
        self.port = port
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        username = components.user.flatMap { $0.isEmpty ? nil : $0 }
        password = components.password
    }

    /// `http://host:port` or `socks5://host:port`, with the user name but never the password.
    public var description: String {
        let scheme = kind == .http ? "http" : "socks5"
        let user = username.map { "\($0)@" } ?? ""
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(user)\(bracketed):\(port)"
    }

    /// `host:port`, as errors name the proxy.
    var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `Proxy-Authorization`'s value for an HTTP proxy with a user name: Basic, as curl sends it.
    var basicAuthorization: String? {
        guard let username else { return nil }
        return "Basic " + Data("\(username):\(password ?? "")".utf8).base64EncodedString()
    }

    /// A proxy URL with the password of its `user:password@` part replaced by `***`, for messages.
    public static func redacted(_ string: String) -> String {
        guard let at = string.lastIndex(of: "@") else { return string }
        let start = string.range(of: "://")?.upperBound ?? string.startIndex
        guard start < at, let colon = string[start..<at].firstIndex(of: ":") else { return string }
        return String(string[..<colon]) + ":***" + String(string[at...])
    }
}

import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `courier --session NAME` keeps between invocations, as HTTPie's sessions do: the custom header fields sent,
/// the cookies the server set, and the credentials given. One per host (and port) and name.
struct StoredSession: Codable, Equatable, Sendable {
    struct Header: Codable, Equatable, Sendable {
        var name: String
        var value: String
    }

    struct Cookie: Codable, Equatable, Sendable {
        var name: String
        var value: String
        var domain: String
        var path: String
        var expires: Date?
        var secure: Bool
    }

    struct Auth: Codable, Equatable, Sendable {
        /// `basic` or `digest`.
        var type: String
        var username: String
        var password: String
    }

    var headers: [Header] = []
    var cookies: [Cookie] = []
    var auth: Auth?

    /// Header fields that describe one request's body or conditions, never kept (as HTTPie leaves them out).
    static func isKept(_ name: String) -> Bool {
        let lower = name.lowercased()
        return !lower.hasPrefix("content-") && !lower.hasPrefix("if-") && lower != "cookie"
            && lower != "authorization" && lower != "host"
    }

    /// The cookies for `url` that have not expired, as a `Cookie` field's value; `nil` for none.
    func cookieField(for url: URL, now: Date = Date()) -> String? {
        let host = url.host?.lowercased() ?? ""
        let path = url.path.isEmpty ? "/" : url.path
        let secure = url.scheme?.lowercased() == "https"
        let matching = cookies.filter { cookie in
            let domain = cookie.domain.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
            return (host == domain || host.hasSuffix("." + domain)) && path.hasPrefix(cookie.path)
                && (!cookie.secure || secure) && (cookie.expires.map { $0 > now } ?? true)
        }
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// The session after a request: `sent` header fields (the custom ones, kept by name), `auth` when given, and
    /// the cookies `responses` set (replacing those of the same name, domain and path; expired ones dropped).
    func updated(sent: [Header], auth: Auth?, responses: [(URL, [String: String])], now: Date = Date())
        -> StoredSession
    {
        var next = self
        for header in sent where Self.isKept(header.name) {
            next.headers.removeAll { $0.name.caseInsensitiveCompare(header.name) == .orderedSame }
            next.headers.append(header)
        }
        if let auth { next.auth = auth }
        for (url, fields) in responses {
            for cookie in HTTPCookie.cookies(withResponseHeaderFields: fields, for: url) {
                next.cookies.removeAll {
                    $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path
                }
                next.cookies.append(
                    Cookie(
                        name: cookie.name, value: cookie.value, domain: cookie.domain, path: cookie.path,
                        expires: cookie.expiresDate, secure: cookie.isSecure))
            }
        }
        next.cookies.removeAll { $0.expires.map { $0 <= now } ?? false }
        return next
    }
}

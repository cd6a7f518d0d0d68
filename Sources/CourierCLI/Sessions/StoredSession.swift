import Courier
import Foundation

/// What `courier --session NAME` keeps between invocations, as HTTPie's sessions do: the custom header fields sent,
/// the cookies of the run's cookie jar (every hop's, field by field), and the credentials given. One per host (and
/// port) and name.
struct StoredSession: Codable, Equatable, Sendable {
    struct Header: Codable, Equatable, Sendable {
        var name: String
        var value: String
    }

    struct Auth: Codable, Equatable, Sendable {
        /// `basic` or `digest`.
        var type: String
        var username: String
        var password: String
    }

    var headers: [Header] = []
    /// The jar's cookies after the last run (``CookieJar``'s limits bound them).
    var cookies: [CookieJar.Cookie] = []
    var auth: Auth?

    init() {}

    private enum CodingKeys: String, CodingKey {
        case headers, cookies, auth
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        headers = try container.decodeIfPresent([Header].self, forKey: .headers) ?? []
        cookies = try container.decodeIfPresent([SavedCookie].self, forKey: .cookies)?.map(\.cookie) ?? []
        auth = try container.decodeIfPresent(Auth.self, forKey: .auth)
    }

    /// Header fields that describe one request's body or conditions, never kept (as HTTPie leaves them out);
    /// cookies are kept as cookies, not as a field.
    static func isKept(_ name: String) -> Bool {
        let lower = name.lowercased()
        return !lower.hasPrefix("content-") && !lower.hasPrefix("if-") && lower != "cookie"
            && lower != "authorization" && lower != "host"
    }

    /// The session after a request: `sent` header fields (the custom ones, kept by name), `auth` when given, and
    /// the cookies in `jar` at the end of the run.
    func updated(sent: [Header], auth: Auth?, jar: CookieJar) -> StoredSession {
        var next = self
        for header in sent where Self.isKept(header.name) {
            next.headers.removeAll { $0.name.caseInsensitiveCompare(header.name) == .orderedSame }
            next.headers.append(header)
        }
        if let auth { next.auth = auth }
        next.cookies = jar.cookies
        return next
    }
}

/// A cookie as a session file holds it; files written before the cookie jar said `expires` and `secure`.
private struct SavedCookie: Decodable {
    var cookie: CookieJar.Cookie

    private enum EarlierKeys: String, CodingKey {
        case expires, secure
    }

    init(from decoder: any Decoder) throws {
        cookie = try CookieJar.Cookie(from: decoder)
        let earlier = try decoder.container(keyedBy: EarlierKeys.self)
        if let expires = try earlier.decodeIfPresent(Date.self, forKey: .expires) { cookie.expiresDate = expires }
        if try earlier.decodeIfPresent(Bool.self, forKey: .secure) == true { cookie.isSecure = true }
    }
}

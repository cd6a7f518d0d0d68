import Foundation

extension CookieJar {
    /// A cookie as the jar keeps it (RFC 6265bis §5.7's fields).
    public struct Cookie: Sendable, Hashable, Codable {
        /// The name: never empty for a cookie a response set (see ``CookieJar``); one inserted by hand or read from a
        /// file may be, and is then sent as its value alone.
        public var name: String
        /// The value, as the server sent it (quotes included).
        public var value: String
        /// The host (``isHostOnly``) or the domain the cookie goes to: lowercase, no leading dot.
        public var domain: String
        /// Whether only ``domain`` itself gets the cookie, not its subdomains (no `Domain` attribute was given).
        public var isHostOnly: Bool
        /// The path the cookie goes to, with the paths under it (`/a` covers `/a`, `/a/b`, not `/ab`).
        public var path: String
        /// When it expires; `nil` for a session cookie, which lasts as long as the jar.
        public var expiresDate: Date?
        /// Whether it goes only over `https` and `wss`.
        public var isSecure: Bool
        /// Kept for what a browser would do with it; a client without scripts sends it as any other.
        public var isHTTPOnly: Bool
        /// The `SameSite` attribute, kept as ``isHTTPOnly`` is.
        public var sameSite: SameSite
        /// When it was first stored (replacing it with the same name, domain and path keeps the date); the
        /// `Cookie` field lists cookies of the same path length in this order.
        public var creationDate: Date
        /// When it was last sent or stored; the least recently used go first when the jar is full.
        public var lastAccessDate: Date

        /// A cookie with the given fields; the jar keeps it as given (see ``CookieJar/insert(_:)``).
        public init(
            name: String, value: String, domain: String, isHostOnly: Bool = true, path: String = "/",
            expiresDate: Date? = nil, isSecure: Bool = false, isHTTPOnly: Bool = false,
            sameSite: SameSite = .unspecified, creationDate: Date = Date(), lastAccessDate: Date? = nil
        ) {
            self.name = name
            self.value = value
            self.domain = domain.lowercased()
            self.isHostOnly = isHostOnly
            self.path = path
            self.expiresDate = expiresDate
            self.isSecure = isSecure
            self.isHTTPOnly = isHTTPOnly
            self.sameSite = sameSite
            self.creationDate = creationDate
            self.lastAccessDate = lastAccessDate ?? creationDate
        }

        /// Whether it has expired at `now`.
        public func isExpired(at now: Date = Date()) -> Bool {
            expiresDate.map { $0 <= now } ?? false
        }

        /// The cookie's part of a `Cookie` field: `name=value`, or the value alone for an empty name.
        var pair: String { name.isEmpty ? value : name + "=" + value }

        /// Two cookies with the same key replace each other (§5.7 step 23).
        func hasSameKey(as other: Cookie) -> Bool {
            name == other.name && domain == other.domain && path == other.path && isHostOnly == other.isHostOnly
        }

        private enum CodingKeys: String, CodingKey {
            case name, value, domain, isHostOnly, path, expiresDate, isSecure, isHTTPOnly, sameSite, creationDate
            case lastAccessDate
        }

        /// Reads what ``encode(to:)`` writes; fields other than the name, value and domain may be missing (a file
        /// written by hand, or by an earlier version), and take the defaults of ``init(name:value:domain:isHostOnly:path:expiresDate:isSecure:isHTTPOnly:sameSite:creationDate:lastAccessDate:)``.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let domain = try container.decode(String.self, forKey: .domain)
            let created = try container.decodeIfPresent(Date.self, forKey: .creationDate) ?? Date()
            self.init(
                name: try container.decode(String.self, forKey: .name),
                value: try container.decode(String.self, forKey: .value),
                domain: domain.hasPrefix(".") ? String(domain.dropFirst()) : domain,
                isHostOnly: try container.decodeIfPresent(Bool.self, forKey: .isHostOnly) ?? !domain.hasPrefix("."),
                path: try container.decodeIfPresent(String.self, forKey: .path) ?? "/",
                expiresDate: try container.decodeIfPresent(Date.self, forKey: .expiresDate),
                isSecure: try container.decodeIfPresent(Bool.self, forKey: .isSecure) ?? false,
                isHTTPOnly: try container.decodeIfPresent(Bool.self, forKey: .isHTTPOnly) ?? false,
                sameSite: try container.decodeIfPresent(SameSite.self, forKey: .sameSite) ?? .unspecified,
                creationDate: created,
                lastAccessDate: try container.decodeIfPresent(Date.self, forKey: .lastAccessDate))
        }
    }

    /// A cookie's `SameSite` attribute. A client that is not a browser has no cross-site requests, so every
    /// request gets the cookie whatever this says (as a same-site request would); it is kept for code that reads
    /// or writes cookies for a browser.
    public enum SameSite: String, Sendable, Hashable, Codable {
        case strict, lax, none
        /// No attribute, or one the jar does not know.
        case unspecified

        /// The value of a `SameSite` attribute, read without regard to case.
        init(attribute: String) {
            self = SameSite(rawValue: attribute.lowercased()) ?? .unspecified
        }
    }
}

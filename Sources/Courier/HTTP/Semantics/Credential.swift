import Foundation

/// A user name and password for HTTP Basic or Digest authentication, and where they may be sent.
///
/// A session answers a challenge with its ``SessionConfiguration/credential`` only when the challenge's scheme is
/// one of ``schemes`` and the challenging URL is inside ``protectionSpace`` or, when there is none, has the origin
/// (scheme, host and port) of the task's original request. So a server the task was redirected to never receives
/// the password, a Digest credential is never sent as Basic, and a credential meant for `https` never crosses plain
/// `http`. An authentication hook that answers with ``AuthenticationDisposition/useCredential(_:)`` decides for
/// itself.
public struct Credential: Sendable, Hashable {
    /// An HTTP authentication scheme a credential may answer.
    public enum Scheme: String, Sendable, Hashable, CaseIterable {
        /// HTTP Basic (RFC 7617): the password is sent, only encoded.
        case basic
        /// HTTP Digest (RFC 7616): only a hash of the password is sent.
        case digest

        /// Both schemes.
        public static let all: Set<Scheme> = [.basic, .digest]
    }

    /// Where a credential may be sent: one origin, and optionally one realm of it.
    public struct ProtectionSpace: Sendable, Hashable {
        /// `http` or `https`.
        public var scheme: String
        /// The host, compared without regard to case.
        public var host: String
        /// The port; `nil` for the scheme's default.
        public var port: Int?
        /// The realm the challenge must name; `nil` for any.
        public var realm: String?

        /// Creates a protection space.
        public init(scheme: String, host: String, port: Int? = nil, realm: String? = nil) {
            self.scheme = scheme
            self.host = host
            self.port = port
            self.realm = realm
        }

        /// Whether `url` and `realm` are inside this space.
        func contains(_ url: URL, realm challengeRealm: String?) -> Bool {
            containsOrigin(of: url) && realm.map { $0 == challengeRealm } ?? true
        }

        /// Whether `url`'s origin is this space's, whatever the realm.
        func containsOrigin(of url: URL) -> Bool {
            RedirectPolicy.isOrigin(scheme: scheme, host: host, port: port, of: url)
        }
    }

    /// The user name.
    public var user: String
    /// The password.
    public var password: String
    /// The schemes this credential answers; default both. Choose `[.digest]` so the password is never sent in
    /// clear, even to a server that asks for Basic.
    public var schemes: Set<Scheme>
    /// Where the credential may be sent; `nil` (the default): the origin of each task's original request.
    public var protectionSpace: ProtectionSpace?

    /// Creates a credential.
    public init(
        user: String, password: String, schemes: Set<Scheme> = Scheme.all, protectionSpace: ProtectionSpace? = nil
    ) {
        self.user = user
        self.password = password
        self.schemes = schemes
        self.protectionSpace = protectionSpace
    }

    /// Whether this credential may answer `challenge` from `url`, for a task whose original request went to
    /// `originalURL`.
    func answers(_ challenge: AuthenticationChallenge, at url: URL, originalURL: URL?) -> Bool {
        guard let scheme = Scheme(rawValue: challenge.scheme.lowercased()), schemes.contains(scheme) else {
            return false
        }
        if let protectionSpace { return protectionSpace.contains(url, realm: challenge.realm) }
        guard let originalURL else { return false }
        return RedirectPolicy.sameOrigin(originalURL, url)
    }
}

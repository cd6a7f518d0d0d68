import Courier

/// `--auth user:password` and `--auth-type`.
struct AuthOptions: Sendable, Hashable {
    /// Basic is sent with the first request; Digest answers the server's challenge.
    enum Scheme: String, Sendable, Hashable, CaseIterable {
        /// HTTP Basic.
        case basic
        /// HTTP Digest.
        case digest
    }

    /// The credential.
    var credential: Credential
    /// How it is sent.
    var scheme: Scheme

    /// Credentials from elsewhere (the URL's user info).
    init(credential: Credential, scheme: Scheme) {
        self.credential = credential
        self.scheme = scheme
    }

    /// Parses `user:password`; the password may contain `:`.
    ///
    /// - Throws: ``CommandFailure`` when there is no `:`.
    init(_ text: String, scheme: Scheme) throws {
        guard let colon = text.firstIndex(of: ":") else {
            throw CommandFailure(.failure, "--auth “\(text)” needs a password: use --auth user:password")
        }
        credential = Credential(user: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
        self.scheme = scheme
    }
}

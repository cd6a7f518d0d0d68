import Courier

/// `--auth user:password` (or `--auth TOKEN` with `--auth-type bearer`) and `--auth-type`.
struct AuthOptions: Sendable, Hashable {
    /// Basic is sent with the first request; Digest answers the server's challenge.
    enum Scheme: String, Sendable, Hashable, CaseIterable {
        /// HTTP Basic.
        case basic
        /// HTTP Digest.
        case digest
        /// `Authorization: Bearer TOKEN` (RFC 6750), sent with the first request, as HTTPie's `-A bearer`.
        case bearer
    }

    /// The credential; a bearer token is its password, with no user name.
    var credential: Credential
    /// How it is sent.
    var scheme: Scheme

    /// Credentials from elsewhere (the URL's user info).
    init(credential: Credential, scheme: Scheme) {
        self.credential = credential
        self.scheme = scheme
    }

    /// Parses `user:password` (the password may contain `:`), or a bearer token whole. A user without a password
    /// (`-a USER`) is asked for one with `askPassword` (on the terminal, without echo, as HTTPie does).
    ///
    /// - Throws: ``CommandFailure`` when there is no terminal to ask for a missing password, or for a token that is
    ///   empty or has control characters or spaces (it goes into a header field as it is).
    init(
        _ text: String, scheme: Scheme,
        askPassword: (String) throws -> String = {
            try PasswordPrompt.ask("password for \(TerminalText.escape($0, keepingLineBreaks: false)): ")
        }
    ) throws {
        if scheme == .bearer {
            guard !text.isEmpty, !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else {
                throw CommandFailure(
                    .failure, "--auth: a bearer token cannot be empty or contain spaces or control characters")
            }
            credential = Credential(user: "", password: text)
            self.scheme = scheme
            return
        }
        guard let colon = text.firstIndex(of: ":") else {
            credential = Credential(user: text, password: try askPassword(text))
            self.scheme = scheme
            return
        }
        credential = Credential(user: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
        self.scheme = scheme
    }
}

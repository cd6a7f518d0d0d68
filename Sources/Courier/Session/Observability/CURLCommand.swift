import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `curl` command line that sends what a request sends (Alamofire's `cURLDescription()`): its method, header fields,
/// body and URL, quoted for a POSIX shell, one option a line.
///
/// Invariant: every value is inside single quotes (a `'` in it written `'\''`), so pasting the command runs `curl`
/// and nothing else, whatever the request holds.
enum CURLCommand {
    /// What a redacted value becomes.
    static let redacted = "REDACTED"

    /// The command for `request` with the header fields it goes out with (`headers`, which the caller makes: the
    /// session's additions and cookies included) and, when the session would answer a challenge with one,
    /// `credential`. With `redactingSecrets`, the values of `Authorization`, `Proxy-Authorization` and `Cookie`, a
    /// password in the URL and the credential's password are written as `REDACTED`.
    static func make(
        _ request: URLRequest, headers: HTTPHeaderFields, credential: Credential?, redactingSecrets: Bool
    ) -> String {
        var lines = ["curl"]
        let method = (request.httpMethod ?? "GET").uppercased()
        if method == "HEAD" {
            lines.append("--head")
        } else if method != "GET" || request.httpBody != nil {
            lines.append("--request \(quoted(method))")
        }
        if let credential {
            let schemes = credential.schemes
            let scheme = schemes == [.digest] ? "--digest" : schemes == [.basic] ? "--basic" : "--anyauth"
            let password = redactingSecrets ? redacted : credential.password
            lines.append("\(scheme) --user \(quoted("\(credential.user):\(password)"))")
        }
        let secret: Set<String> = ["authorization", "proxy-authorization", "cookie"]
        for field in headers {
            let value = redactingSecrets && secret.contains(field.name.lowercased()) ? redacted : field.value
            // `Name;` is how curl sends a field with an empty value (`Name:` would remove it).
            lines.append("--header \(quoted(value.isEmpty ? "\(field.name);" : "\(field.name): \(value)"))")
        }
        // curl sends these two of its own unless told not to (`Name:` removes a field); the request has neither.
        for name in ["Accept", "User-Agent"] where headers[name] == nil {
            lines.append("--header \(quoted("\(name):"))")
        }
        if let body = request.httpBody {
            if let text = String(data: body, encoding: .utf8), !text.contains("\0") {
                lines.append("--data-binary \(quoted(text))")
            } else {
                lines.append("# a body of \(body.count) bytes that are not text is left out")
            }
        } else if request.httpBodyStream != nil {
            lines.append("# a streamed body is left out")
        }
        var url = request.url?.absoluteString ?? ""
        if redactingSecrets, let parsed = request.url, parsed.password != nil,
            var components = URLComponents(url: parsed, resolvingAgainstBaseURL: false)
        {
            components.password = redacted
            url = components.url?.absoluteString ?? url
        }
        lines.append(quoted(url))
        // A comment cannot continue a line: it goes last, after the command.
        let comments = lines.filter { $0.hasPrefix("#") }
        let command = lines.filter { !$0.hasPrefix("#") }.joined(separator: " \\\n\t")
        return ([command] + comments).joined(separator: "\n")
    }

    /// `text` in single quotes for a POSIX shell.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

extension URLRequest {
    /// A `curl` command that sends this request as it is: its method, header fields, body and URL, quoted for a
    /// POSIX shell. A session adds its own fields and cookies when it sends one; ``SessionTask/cURLDescription(redactingSecrets:)``
    /// and ``SessionManager/cURLDescription(of:redactingSecrets:)`` include them.
    ///
    /// - Parameter redactingSecrets: write the values of `Authorization`, `Proxy-Authorization` and `Cookie`, and a
    ///   password in the URL, as `REDACTED` (for a log or a bug report).
    public func cURLDescription(redactingSecrets: Bool = false) -> String {
        CURLCommand.make(
            self, headers: HTTPHeaderFields(HTTPRequestSerializer.sorted(allHTTPHeaderFields ?? [:])),
            credential: nil, redactingSecrets: redactingSecrets)
    }
}

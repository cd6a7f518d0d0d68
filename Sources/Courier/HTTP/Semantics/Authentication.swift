import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Parses `WWW-Authenticate` challenges and builds the matching `Authorization` values (Basic, and Digest with MD5,
/// SHA-256 or SHA-512-256, their `-sess` variants, `qop=auth` and `userhash`, RFC 7616).
enum Authentication {
    /// The challenge of a `401` response to answer: the first Digest one with an algorithm Courier implements (a
    /// server lists them in the order it prefers, RFC 7616 §3.7), else the first Basic one, among the schemes in
    /// `preferring`; failing that, the first Basic or Digest challenge (for a hook to see, though the session's
    /// credential will not answer it). Every `WWW-Authenticate` field is read, and a field may hold several
    /// challenges (`Basic realm="a", Digest realm="b", nonce="n"`).
    static func challenge(
        in headers: HTTPHeaderFields, response: @autoclosure () throws -> HTTPURLResponse, previousFailureCount: Int,
        preferring schemes: Set<Credential.Scheme>
    ) rethrows -> AuthenticationChallenge? {
        let offered = headers.values(for: "WWW-Authenticate").flatMap(challenges(in:)).filter {
            Credential.Scheme(rawValue: $0.scheme.lowercased()) != nil
        }
        func first(_ scheme: Credential.Scheme) -> (scheme: String, parameters: [String: String])? {
            guard schemes.contains(scheme) else { return nil }
            return offered.first {
                $0.scheme.lowercased() == scheme.rawValue
                    && (scheme != .digest || DigestAlgorithm($0.parameters["algorithm"]) != nil)
            }
        }
        guard let chosen = first(.digest) ?? first(.basic) ?? offered.first else { return nil }
        return AuthenticationChallenge(
            scheme: chosen.scheme, parameters: chosen.parameters, previousFailureCount: previousFailureCount,
            response: try response())
    }

    /// The challenges in one `WWW-Authenticate` value: a new challenge starts at an element whose first token is
    /// not followed by `=` (`Digest realm="x"`, or a bare `Negotiate`).
    static func challenges(in value: String) -> [(scheme: String, parameters: [String: String])] {
        var found: [(scheme: String, parameters: String)] = []
        for element in splitOutsideQuotes(value) {
            let trimmed = element.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            let token = trimmed.prefix { !$0.isWhitespace && $0 != "=" }
            let afterToken = trimmed.dropFirst(token.count)
            if afterToken.first == "=" {
                // A parameter of the challenge before it.
                if !found.isEmpty { found[found.count - 1].parameters += ", " + trimmed }
            } else {
                found.append((String(token), afterToken.trimmingCharacters(in: .whitespaces)))
            }
        }
        return found.map { ($0.scheme, parseParameters($0.parameters)) }
    }

    /// `value` split at the commas outside quoted strings.
    private static func splitOutsideQuotes(_ value: String) -> [Substring] {
        var parts: [Substring] = []
        var start = value.startIndex
        var index = value.startIndex
        var quoted = false
        while index < value.endIndex {
            let character = value[index]
            if character == "\\", quoted, value.index(after: index) < value.endIndex {
                index = value.index(index, offsetBy: 2)
                continue
            }
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                parts.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        parts.append(value[start...])
        return parts
    }

    /// `name=value, name="quoted, value"` pairs.
    static func parseParameters(_ text: String) -> [String: String] {
        var parameters: [String: String] = [:]
        var index = text.startIndex
        while index < text.endIndex {
            while index < text.endIndex, text[index] == " " || text[index] == "," { index = text.index(after: index) }
            guard let equals = text[index...].firstIndex(of: "=") else { break }
            let name = text[index..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            index = text.index(after: equals)
            var value = ""
            if index < text.endIndex, text[index] == "\"" {
                index = text.index(after: index)
                while index < text.endIndex, text[index] != "\"" {
                    if text[index] == "\\", text.index(after: index) < text.endIndex {
                        index = text.index(after: index)
                    }
                    value.append(text[index])
                    index = text.index(after: index)
                }
                if index < text.endIndex { index = text.index(after: index) }
            } else {
                let end = text[index...].firstIndex(of: ",") ?? text.endIndex
                value = text[index..<end].trimmingCharacters(in: .whitespaces)
                index = end
            }
            if !name.isEmpty { parameters[name] = value }
        }
        return parameters
    }

    /// The `Authorization` value answering `challenge` for `request`; `clientNonce` is random unless given (a test
    /// gives RFC 7616's).
    static func authorization(
        for challenge: AuthenticationChallenge, credential: Credential, method: String, url: URL,
        clientNonce: String? = nil
    ) -> String {
        if challenge.scheme.lowercased() == "basic" {
            return "Basic " + Data("\(credential.user):\(credential.password)".utf8).base64EncodedString()
        }
        // A challenge chosen by `challenge(in:…)` names one; a hook's own choice may not: answered with MD5.
        let algorithm = DigestAlgorithm(challenge.parameters["algorithm"]) ?? .md5
        let realm = challenge.parameters["realm"] ?? ""
        let nonce = challenge.parameters["nonce"] ?? ""
        var uri = url.path.isEmpty ? "/" : url.path
        if let query = url.query { uri += "?" + query }
        let clientNonce = clientNonce ?? UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        var ha1 = algorithm.hex("\(credential.user):\(realm):\(credential.password)")
        if algorithm.session { ha1 = algorithm.hex("\(ha1):\(nonce):\(clientNonce)") }
        let ha2 = algorithm.hex("\(method):\(uri)")
        let hashesUser = challenge.parameters["userhash"]?.lowercased() == "true"
        let user = hashesUser ? algorithm.hex("\(credential.user):\(realm)") : credential.user
        var fields = [
            "username=\"\(Self.quoted(user))\"", "realm=\"\(Self.quoted(realm))\"", "nonce=\"\(Self.quoted(nonce))\"",
            "uri=\"\(Self.quoted(uri))\"",
        ]
        let qops = (challenge.parameters["qop"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if qops.contains("auth") {
            let count = "00000001"
            let response = algorithm.hex("\(ha1):\(nonce):\(count):\(clientNonce):auth:\(ha2)")
            fields += ["qop=auth", "nc=\(count)", "cnonce=\"\(clientNonce)\"", "response=\"\(response)\""]
        } else {
            if algorithm.session { fields.append("cnonce=\"\(clientNonce)\"") }
            fields.append("response=\"\(algorithm.hex("\(ha1):\(nonce):\(ha2)"))\"")
        }
        if let opaque = challenge.parameters["opaque"] { fields.append("opaque=\"\(Self.quoted(opaque))\"") }
        fields.append("algorithm=\(algorithm.name)")
        if hashesUser { fields.append("userhash=true") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// `text` as the inside of a quoted string: `"` and `\` escaped.
    private static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}

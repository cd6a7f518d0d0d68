import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Parses `WWW-Authenticate` challenges and builds the matching `Authorization` values (Basic, and Digest with MD5
/// and `qop=auth`, RFC 7616).
enum Authentication {
    /// The first Basic or Digest challenge in a `401` response.
    static func challenge(in response: HTTPURLResponse, previousFailureCount: Int) -> AuthenticationChallenge? {
        guard response.statusCode == 401, let header = response.value(forHTTPHeaderField: "WWW-Authenticate") else {
            return nil
        }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        let scheme = String(trimmed.prefix { !$0.isWhitespace })
        guard ["basic", "digest"].contains(scheme.lowercased()) else { return nil }
        let parameters = parseParameters(String(trimmed.dropFirst(scheme.count)))
        return AuthenticationChallenge(
            scheme: scheme, parameters: parameters, previousFailureCount: previousFailureCount, response: response)
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

    /// The `Authorization` value answering `challenge` for `request`.
    static func authorization(
        for challenge: AuthenticationChallenge, credential: Credential, method: String, url: URL
    ) -> String {
        if challenge.scheme.lowercased() == "basic" {
            return "Basic " + Data("\(credential.user):\(credential.password)".utf8).base64EncodedString()
        }
        let realm = challenge.parameters["realm"] ?? ""
        let nonce = challenge.parameters["nonce"] ?? ""
        var uri = url.path.isEmpty ? "/" : url.path
        if let query = url.query { uri += "?" + query }
        let ha1 = MD5.hex("\(credential.user):\(realm):\(credential.password)")
        let ha2 = MD5.hex("\(method):\(uri)")
        var fields = [
            "username=\"\(credential.user)\"", "realm=\"\(realm)\"", "nonce=\"\(nonce)\"", "uri=\"\(uri)\"",
        ]
        let qops = (challenge.parameters["qop"] ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if qops.contains("auth") {
            let clientNonce = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let count = "00000001"
            let response = MD5.hex("\(ha1):\(nonce):\(count):\(clientNonce):auth:\(ha2)")
            fields += ["qop=auth", "nc=\(count)", "cnonce=\"\(clientNonce)\"", "response=\"\(response)\""]
        } else {
            fields.append("response=\"\(MD5.hex("\(ha1):\(nonce):\(ha2)"))\"")
        }
        if let opaque = challenge.parameters["opaque"] { fields.append("opaque=\"\(opaque)\"") }
        fields.append("algorithm=MD5")
        return "Digest " + fields.joined(separator: ", ")
    }
}

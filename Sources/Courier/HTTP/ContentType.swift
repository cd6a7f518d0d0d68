import Foundation

/// A parsed `Content-Type` value: the MIME type and its parameters.
///
/// `application/json; charset=UTF-8` has the MIME type `application/json` and the charset `utf-8`. MIME types and
/// parameter names are compared case-insensitively, so both are kept lower-cased.
public struct ContentType: Sendable, Hashable {
    /// The MIME type, lower-cased, without parameters.
    public var mimeType: String
    /// The parameters, names lower-cased, values unquoted.
    public var parameters: [String: String]

    /// The `charset` parameter, lower-cased.
    public var charset: String? { parameters["charset"]?.lowercased() }

    /// The MIME type of a `Content-Type` header value, lower-cased, without parsing its parameters; `nil` when it
    /// holds none.
    static func mimeType(of headerValue: String) -> String? {
        let mime = headerValue.prefix { $0 != ";" }.trimmingSpaces().lowercased()
        return mime.isEmpty ? nil : mime
    }

    /// Parses a `Content-Type` header value; `nil` when it holds no MIME type.
    public init?(_ headerValue: String) {
        guard let mime = Self.mimeType(of: headerValue) else { return nil }
        self.mimeType = mime
        self.parameters = [:]
        for piece in headerValue.split(separator: ";", omittingEmptySubsequences: false).dropFirst() {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let name = piece[..<equals].trimmingSpaces().lowercased()
            var value = String(piece[piece.index(after: equals)...].trimmingSpaces())
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            if !name.isEmpty { parameters[name] = value }
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs; plain Swift, because Foundation's trimming is the slow part of
    /// reading a `Content-Type` on every response.
    func trimmingSpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}

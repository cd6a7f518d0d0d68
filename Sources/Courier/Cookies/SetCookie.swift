import Foundation

/// One `Set-Cookie` field value read by the parsing algorithm of RFC 6265bis §5.6: what it says, before the jar
/// decides whether to keep it (that needs the request's URL and what is already stored).
///
/// The rules, which servers in the wild rely on:
/// - the name and value are everything before the first `;`, split at the first `=`; neither commas nor quotes are
///   special, so `a="b, c=d"` is one cookie; without `=`, or with an empty name, the field sets nothing (RFC 6265
///   §5.2, which 6265bis relaxed for browsers; curl and Python's cookie jar keep the older rule);
/// - attributes are matched without regard to case, the last of a kind wins, an unknown one is ignored, and an
///   attribute that cannot be read (a bad date, `Max-Age=1x`, an empty `Domain=`, a value over 1,024 bytes) is
///   ignored alone, not the cookie;
/// - a control character other than a tab anywhere, or a name and value over 4,096 bytes together, drops the cookie.
struct SetCookie: Sendable, Equatable {
    /// The longest name and value together (§5.6 step 5).
    static let maximumNameAndValueBytes = 4096
    /// The longest attribute value read (§5.6).
    static let maximumAttributeValueBytes = 1024
    /// How far in the future a cookie may expire (§5.6.1, §5.6.2: no more than 400 days).
    static let maximumLifetime: TimeInterval = 400 * 24 * 60 * 60

    var name: String
    var value: String
    /// When the cookie expires: from the last `Max-Age` when there is one, else from the last `Expires`; `nil` for
    /// a session cookie. `Max-Age` of zero or less gives `.distantPast`: delete the cookie.
    var expires: Date?
    /// The `Domain` attribute, lowercased and without a leading dot; `nil` when absent.
    var domain: String?
    /// The `Path` attribute, when it starts with `/`; `nil` otherwise (the default path applies).
    var path: String?
    var isSecure = false
    var isHTTPOnly = false
    var sameSite: CookieJar.SameSite = .unspecified

    /// Parses `text`, one field value, at `now`; `nil` when the cookie is to be ignored entirely.
    init?(_ text: String, now: Date = Date()) {
        let bytes = Array(text.utf8)
        // CTLs other than HTAB (§5.6 step 1).
        guard !bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        let pairEnd = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let pair = bytes[..<pairEnd]
        // RFC 6265's rule, not 6265bis's: a pair without `=` or with an empty name is dropped rather than kept as a
        // nameless cookie (as curl, Python's cookie jar and so HTTPie do), so a value can never pose as a name
        // (`=__Host-sid=x`) to a server that reads the field back.
        guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        name = Self.trimmed(pair[..<equals])
        value = Self.trimmed(pair[(equals + 1)...])
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= Self.maximumNameAndValueBytes else { return nil }
        var maxAge: Date?
        var expiresAttribute: Date?
        var rest = bytes[pairEnd...]
        while let semicolon = rest.first, semicolon == UInt8(ascii: ";") {
            rest = rest.dropFirst()
            let end = rest.firstIndex(of: UInt8(ascii: ";")) ?? rest.endIndex
            let attribute = rest[..<end]
            rest = rest[end...]
            let attributeName: String
            let attributeValue: String
            if let equals = attribute.firstIndex(of: UInt8(ascii: "=")) {
                attributeName = Self.trimmed(attribute[..<equals])
                attributeValue = Self.trimmed(attribute[(equals + 1)...])
            } else {
                attributeName = Self.trimmed(attribute)
                attributeValue = ""
            }
            guard attributeValue.utf8.count <= Self.maximumAttributeValueBytes else { continue }
            switch attributeName.lowercased() {
            case "expires":
                if let date = CookieDate.parse(attributeValue) {
                    expiresAttribute = min(date, now.addingTimeInterval(Self.maximumLifetime))
                }
            case "max-age":
                if let seconds = Self.deltaSeconds(attributeValue) {
                    maxAge =
                        seconds <= 0
                        ? .distantPast
                        : now.addingTimeInterval(min(TimeInterval(seconds), Self.maximumLifetime))
                }
            case "domain":
                guard !attributeValue.isEmpty else { continue }  // §5.6.3: ignored, the cookie stays host-only
                let lowered = attributeValue.lowercased()
                domain = lowered.hasPrefix(".") ? String(lowered.dropFirst()) : lowered
            case "path":
                path = attributeValue.hasPrefix("/") ? attributeValue : nil
            case "secure":
                isSecure = true
            case "httponly":
                isHTTPOnly = true
            case "samesite":
                sameSite = CookieJar.SameSite(attribute: attributeValue)
            default:
                continue
            }
        }
        expires = maxAge ?? expiresAttribute
    }

    /// A `Max-Age` value: an optional `-` then digits only; `nil` for anything else (§5.6.2). Very large values
    /// saturate rather than overflow.
    private static func deltaSeconds(_ text: String) -> Int? {
        var digits = Substring(text)
        let negative = digits.first == "-"
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let magnitude = Int(digits) ?? Int.max
        return negative ? -magnitude : magnitude
    }

    /// The text between leading and trailing spaces and tabs.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
        let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}

extension SetCookie {
    /// Splits a field value in which a transport joined several `Set-Cookie` fields with `, ` (URLSession does, on
    /// every platform) back into one value per cookie.
    ///
    /// A comma starts a new cookie only when what follows it reads as `name=` up to the next `;`, `,` or `=` and
    /// the comma is not inside double quotes: the comma in `Expires=Wed, 09 Jun 2021 …` is followed by a date, not
    /// a name. A single field that itself holds `, name=` after the first pair cannot be told from two joined
    /// ones; transports that keep fields apart (``NIOTransport``) never call this.
    static func splitJoined(_ joined: String) -> [String] {
        let bytes = Array(joined.utf8)
        var parts: [String] = []
        var start = 0
        var quoted = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if byte == UInt8(ascii: ","), !quoted, startsCookie(bytes, at: index + 1) {
                parts.append(String(decoding: bytes[start..<index], as: UTF8.self))
                start = index + 1
            }
            index += 1
        }
        parts.append(String(decoding: bytes[start...], as: UTF8.self))
        return parts.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Whether `bytes` from `index` read as optional spaces, a token, then `=`.
    private static func startsCookie(_ bytes: [UInt8], at index: Int) -> Bool {
        var position = index
        while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x09 { position += 1 }
        let nameStart = position
        while position < bytes.count, isTokenByte(bytes[position]) { position += 1 }
        return position > nameStart && position < bytes.count && bytes[position] == UInt8(ascii: "=")
    }

    /// RFC 9110's `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

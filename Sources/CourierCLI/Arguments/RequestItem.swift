/// One `ITEM` of `courier [METHOD] URL [ITEM ...]`, in HTTPie's syntax.
///
/// | Item | Meaning |
/// |---|---|
/// | `name==value` | query parameter |
/// | `Header:value` | request header (`Header:` removes a default header, `Header;` sends it empty) |
/// | `name=value` | data field (JSON string, or form field) |
/// | `name:=json` | raw JSON data field (`n:=1`, `tags:='["a"]'`) |
/// | `name=@file` | data field whose value is the text of `file` |
/// | `name:=@file` | raw JSON data field read from `file` |
/// | `name@file` | file field: makes the request multipart (`name@file;type=image/png` sets its type) |
///
/// A backslash escapes a separator character (`a\=b==c` is the query parameter `a=b` = `c`).
struct RequestItem: Sendable, Hashable {
    /// What the item is.
    enum Kind: Sendable, Hashable {
        /// `name==value`.
        case query(String)
        /// `Header:value`.
        case header(String)
        /// `Header:` with nothing after it: do not send the header at all.
        case removeHeader
        /// `Header;`: send the header with an empty value.
        case emptyHeader
        /// `name=value`.
        case dataField(String)
        /// `name=@path`.
        case dataFieldFile(path: String)
        /// `name:=json`.
        case jsonField(String)
        /// `name:=@path`.
        case jsonFieldFile(path: String)
        /// `name@path`, with an explicit `;type=` if given.
        case file(path: String, mimeType: String?)
    }

    /// The name before the separator, unescaped.
    var name: String
    /// The separator and the value after it.
    var kind: Kind

    /// Creates an item.
    init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// Whether the item goes in the body (data, JSON and file fields).
    var isBodyField: Bool {
        switch kind {
        case .dataField, .dataFieldFile, .jsonField, .jsonFieldFile, .file: return true
        case .query, .header, .removeHeader, .emptyHeader: return false
        }
    }

    /// Longest first, so that at one position `:=@` wins over `:=` and `:`, and `==` over `=`.
    private static let separators = [":=@", "=@", "==", ":=", "@", "=", ":", ";"]

    /// Parses an item; `nil` when it has no separator (so it cannot be an item).
    ///
    /// The separator is the first one in the text that is not escaped; at one position the longest one wins.
    static func parse(_ text: String) -> RequestItem? {
        let characters = Array(text)
        var index = 0
        var name = ""
        while index < characters.count {
            let character = characters[index]
            if character == "\\", index + 1 < characters.count {
                name.append(characters[index + 1])
                index += 2
                continue
            }
            for separator in separators where matches(separator, in: characters, at: index) {
                let rest = unescape(String(characters[(index + separator.count)...]))
                guard let kind = kind(for: separator, value: rest) else { continue }
                return RequestItem(name: name, kind: kind)
            }
            name.append(character)
            index += 1
        }
        return nil
    }

    private static func matches(_ separator: String, in characters: [Character], at index: Int) -> Bool {
        let separator = Array(separator)
        guard index + separator.count <= characters.count else { return false }
        return Array(characters[index..<(index + separator.count)]) == separator
    }

    private static func kind(for separator: String, value: String) -> Kind? {
        switch separator {
        case "==": return .query(value)
        case ":=@": return .jsonFieldFile(path: value)
        case ":=": return .jsonField(value)
        case "=@": return .dataFieldFile(path: value)
        case "=": return .dataField(value)
        case ":": return value.isEmpty ? .removeHeader : .header(String(value.drop(while: { $0 == " " })))
        case ";": return value.isEmpty ? .emptyHeader : nil
        case "@":
            if let range = value.range(of: ";type=", options: .backwards) {
                return .file(path: String(value[..<range.lowerBound]), mimeType: String(value[range.upperBound...]))
            }
            return .file(path: value, mimeType: nil)
        default: return nil
        }
    }

    private static func unescape(_ text: String) -> String {
        guard text.contains("\\") else { return text }
        var result = ""
        var escaping = false
        for character in text {
            if escaping {
                if !"=:@;\\".contains(character) { result.append("\\") }
                result.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        if escaping { result.append("\\") }
        return result
    }
}

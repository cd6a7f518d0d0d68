import Foundation

/// AFNetworking's query-string rules: `AFQueryStringFromParameters` and `AFPercentEscapedStringFromString`.
///
/// Flattening (``pairs(_:arrayEncoding:)``) turns a ``Parameter`` tree into `field`/`value` pairs:
/// - dictionary keys are sorted ascending, code point by code point, and nest as `parent[child]`;
/// - array elements each go under `key[]` in order (or `key` / `key[0]`, see ``ArrayEncoding``);
/// - set elements are sorted by their string form and all go under the same key, without brackets;
/// - empty arrays and dictionaries emit nothing; ``Parameter/null`` emits the field alone.
///
/// A root that is not a dictionary has no key to nest under: a root array or set flattens each element as a root,
/// and a root leaf becomes a pair with an empty field, written as its escaped value alone.
public enum QueryString {
    /// How array elements are named.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `key[]=a&key[]=b`: AFNetworking's behaviour and the default.
        case brackets
        /// `key=a&key=b`: what many servers (Go, Java servlets, Spring) expect.
        case noBrackets
        /// `key[0]=a&key[1]=b`: the element's position in brackets.
        case indexInBrackets
    }

    /// How Booleans are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `1` / `0`: AFNetworking's behaviour (it prints `NSNumber`) and the default.
        case numeric
        /// `true` / `false`.
        case literal
    }

    /// One flattened field and its leaf value (never an array, dictionary or set).
    public struct Pair: Sendable, Hashable {
        /// The unescaped field name, brackets included, e.g. `user[tags][]`.
        public var field: String
        /// The leaf value; ``Parameter/null`` means "field only".
        public var value: Parameter

        /// Creates a pair.
        public init(field: String, value: Parameter) {
            self.field = field
            self.value = value
        }

        /// The pair as `field=value`, both percent-escaped, or the escaped field alone for a null value.
        public func escaped(boolEncoding: BoolEncoding = .numeric) -> String {
            joined(boolEncoding: boolEncoding, escape: QueryString.percentEscape)
        }

        /// The pair as `field=value` with each part escaped by `escape`: the field alone for a null value, the value
        /// alone for an empty field.
        func joined(boolEncoding: BoolEncoding, escape: (String) throws -> String) rethrows -> String {
            guard let value = value.leafString(boolEncoding: boolEncoding) else { return try escape(field) }
            if field.isEmpty { return try escape(value) }
            return try escape(field) + "=" + escape(value)
        }
    }

    /// Flattens a parameter tree into pairs, in the order AFNetworking emits them.
    public static func pairs(_ parameters: Parameter, arrayEncoding: ArrayEncoding = .brackets) -> [Pair] {
        var pairs: [Pair] = []
        flatten(key: nil, value: parameters, arrayEncoding: arrayEncoding, into: &pairs)
        return pairs
    }

    /// The query string for a parameter tree: escaped pairs joined with `&`.
    ///
    /// `QueryString.encode(["key": "value", "key1": "value&"])` is `key=value&key1=value%26`.
    public static func encode(
        _ parameters: Parameter,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) -> String {
        pairs(parameters, arrayEncoding: arrayEncoding)
            .map { $0.escaped(boolEncoding: boolEncoding) }
            .joined(separator: "&")
    }

    /// The query string for a parameter tree with each field and value escaped as its bytes in `stringEncoding`
    /// (`é` is `%E9` in ISO-8859-1), as a browser sends a form of a page in that encoding.
    ///
    /// - Throws: ``CourierError/parameterEncodingFailed(reason:underlyingError:)`` naming the first text the
    ///   encoding cannot write.
    public static func encode(
        _ parameters: Parameter, arrayEncoding: ArrayEncoding = .brackets, boolEncoding: BoolEncoding = .numeric,
        stringEncoding: String.Encoding
    ) throws -> String {
        if stringEncoding == .utf8 {
            return encode(parameters, arrayEncoding: arrayEncoding, boolEncoding: boolEncoding)
        }
        func escaped(_ text: String) throws -> String {
            guard let bytes = text.data(using: stringEncoding, allowLossyConversion: false) else {
                throw unwritable(text, in: stringEncoding)
            }
            return escape(bytes)
        }
        return try pairs(parameters, arrayEncoding: arrayEncoding)
            .map { try $0.joined(boolEncoding: boolEncoding, escape: escaped) }
            .joined(separator: "&")
    }

    /// The error for `text` that `encoding` cannot write.
    static func unwritable(_ text: String, in encoding: String.Encoding) -> CourierError {
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return .parameterEncodingFailed(
            reason: "“\(shown)” cannot be written in \(encoding.ianaCharsetName ?? String(describing: encoding))",
            underlyingError: nil)
    }

    /// Percent-escapes a string for a query component as RFC 3986 §3.4 allows.
    ///
    /// Only `A–Z a–z 0–9 - . _ ~ / ?` stay literal; every other byte of the UTF-8 form becomes `%XX` with
    /// upper-case hex. A space is `%20` (never `+`) and `%` is always escaped. Because a Swift `String` is always
    /// valid Unicode and whole scalars are encoded, no grapheme or surrogate pair is ever split.
    public static func percentEscape(_ string: String) -> String {
        string.utf8.withContiguousStorageIfAvailable { escape($0) } ?? escape(Array(string.utf8))
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func escape<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        for byte in bytes {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"),
            UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }

    /// Plain, case-sensitive ordering by Unicode code point (AFNetworking sorts keys with a non-caseless compare).
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.unicodeScalars.lexicographicallyPrecedes(rhs.unicodeScalars)
    }

    private static func flatten(key: String?, value: Parameter, arrayEncoding: ArrayEncoding, into pairs: inout [Pair])
    {
        switch value {
        case .dictionary(let dictionary):
            for childKey in dictionary.keys.sorted(by: precedes) {
                guard let child = dictionary[childKey] else { continue }
                let nestedKey = key.map { "\($0)[\(childKey)]" } ?? childKey
                flatten(key: nestedKey, value: child, arrayEncoding: arrayEncoding, into: &pairs)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                let elementKey = key.map { key -> String in
                    switch arrayEncoding {
                    case .brackets: return key + "[]"
                    case .noBrackets: return key
                    case .indexInBrackets: return "\(key)[\(index)]"
                    }
                }
                flatten(key: elementKey, value: element, arrayEncoding: arrayEncoding, into: &pairs)
            }
        case .set(let elements):
            for element in Parameter.sortedSetElements(elements) {
                flatten(key: key, value: element, arrayEncoding: arrayEncoding, into: &pairs)
            }
        case .null:
            if let key { pairs.append(Pair(field: key, value: .null)) }
        case .string, .int, .double, .bool, .data:
            pairs.append(Pair(field: key ?? "", value: value))
        }
    }
}

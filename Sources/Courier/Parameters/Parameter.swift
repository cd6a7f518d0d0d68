import Foundation

/// A request parameter tree: what AFNetworking accepts as an `NSDictionary` of parameters, as a typed value.
///
/// Build one from literals:
///
/// ```swift
/// let parameters: Parameter = ["name": "bang", "phone": ["mobile": "xx"], "tags": ["a", "b"], "n": 1]
/// ```
///
/// or from any `Encodable` model with ``init(encoding:encoder:)``.
///
/// Request serializers decide how a tree is written: ``QueryString`` flattens it with AFNetworking's nesting
/// rules, ``JSONRequestSerializer`` writes JSON, ``PropertyListRequestSerializer`` writes a property list.
public indirect enum Parameter: Sendable, Hashable {
    /// A text value.
    case string(String)
    /// An integer, rendered without a fraction.
    case int(Int)
    /// A floating-point number, rendered in its shortest round-trip form.
    case double(Double)
    /// A Boolean, rendered `1`/`0` in query strings unless ``QueryString/BoolEncoding/literal`` is chosen.
    case bool(Bool)
    /// An explicit null: a query string emits the field alone, without `=`.
    case null
    /// Raw bytes: rendered as UTF-8 text in query strings, sent raw in multipart bodies.
    case data(Data)
    /// An ordered list; in query strings each element goes under `key[]`.
    case array([Parameter])
    /// Named values; in query strings keys are sorted and nested as `parent[child]`.
    case dictionary([String: Parameter])
    /// An unordered collection; in query strings elements are sorted and all go under the same key.
    case set(Set<Parameter>)
}

extension Parameter {
    /// Whether the value is a leaf (not an array, dictionary or set).
    public var isLeaf: Bool {
        switch self {
        case .array, .dictionary, .set: return false
        default: return true
        }
    }

    /// The value's text as AFNetworking's `-description` renders a leaf, or `nil` for containers and ``null``.
    ///
    /// - Parameter boolEncoding: how Booleans are written (`1`/`0` by default).
    public func leafString(boolEncoding: QueryString.BoolEncoding = .numeric) -> String? {
        switch self {
        case .string(let value):
            return value
        case .int(let value):
            return String(value)
        case .double(let value):
            return Parameter.render(value)
        case .bool(let value):
            switch boolEncoding {
            case .numeric: return value ? "1" : "0"
            case .literal: return value ? "true" : "false"
            }
        case .data(let value):
            return String(decoding: value, as: UTF8.self)
        case .null, .array, .dictionary, .set:
            return nil
        }
    }

    /// Integral doubles print without a fraction, as `NSNumber` does; the rest use Swift's shortest round-trip form.
    static func render(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            return String(Int64(value))
        }
        return value.description
    }
}

extension Parameter: ExpressibleByStringLiteral, ExpressibleByStringInterpolation, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// Creates a ``string(_:)`` parameter.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates an ``int(_:)`` parameter.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// Creates a ``double(_:)`` parameter.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Creates a ``bool(_:)`` parameter.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// Creates an ``array(_:)`` parameter.
    public init(arrayLiteral elements: Parameter...) { self = .array(elements) }
    /// Creates a ``dictionary(_:)`` parameter; when a key repeats, the last value wins.
    public init(dictionaryLiteral elements: (String, Parameter)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension Parameter: Encodable {
    /// Encodes the tree as the matching `Encodable` shapes: a set becomes an array sorted by its query-string form,
    /// ``null`` becomes `nil`, ``data(_:)`` becomes `Data` (the encoder decides how bytes are written).
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .int(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .double(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .data(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .set(let values):
            var container = encoder.unkeyedContainer()
            for value in Parameter.sortedSetElements(values) { try container.encode(value) }
        case .dictionary(let values):
            var container = encoder.container(keyedBy: AnyCodingKey.self)
            for (key, value) in values { try container.encode(value, forKey: AnyCodingKey(key)) }
        }
    }

    /// Set elements in AFNetworking's order: ascending by their string form, code point by code point.
    static func sortedSetElements(_ values: Set<Parameter>) -> [Parameter] {
        values.map { (key: $0.sortKey, value: $0) }
            .sorted { QueryString.precedes($0.key, $1.key) }
            .map(\.value)
    }

    /// The string a set sorts its elements by: the leaf text, or the query string of a container.
    private var sortKey: String {
        switch self {
        case .null: return ""
        case .array, .dictionary, .set: return QueryString.encode(self)
        default: return leafString() ?? ""
        }
    }
}

/// A coding key made from any string or integer.
struct AnyCodingKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) {
        self.stringValue = string
        self.intValue = nil
    }

    init?(stringValue: String) {
        self.init(stringValue)
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

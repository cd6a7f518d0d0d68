import Foundation

/// A parsed JSON document as a Sendable value: what ``JSONResponseSerializer`` returns.
///
/// Read it with subscripts (`json["user"]?["tags"]?[0]`) and the typed accessors (``stringValue``,
/// ``doubleValue``, ``intValue``…), or decode a model from it with ``decode(_:decoder:)``. Numbers are `Double`s:
/// integers beyond ±2⁵³ lose precision, as in JavaScript.
public enum JSON: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// Any number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object.
    case object([String: JSON])
}

extension JSON {
    /// Parses JSON text (top-level scalars allowed).
    ///
    /// - Throws: the decoder's `DecodingError` for malformed input.
    public init(data: Data) throws {
        self = try JSONDecoder().decode(JSON.self, from: data)
    }

    /// The member `key` of an object; `nil` for other values or a missing key.
    public subscript(key: String) -> JSON? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// The element at `index` of an array; `nil` for other values or an index out of range.
    public subscript(index: Int) -> JSON? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// The string, for ``string(_:)``.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, for ``number(_:)``.
    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number as an `Int`, when it is integral and in range.
    public var intValue: Int? {
        guard case .number(let value) = self else { return nil }
        return Int(exactly: value)
    }

    /// The Boolean, for ``bool(_:)``.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, for ``array(_:)``.
    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, for ``object(_:)``.
    public var objectValue: [String: JSON]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether the value is ``null``.
    public var isNull: Bool { self == .null }

    /// A copy without nulls, recursively: object members whose value is null and null array elements are removed
    /// (`AFJSONObjectByRemovingKeysWithNullValues`, including AFNetworking 4's array rule).
    public func removingNullValues() -> JSON {
        switch self {
        case .object(let object):
            return .object(object.filter { !$0.value.isNull }.mapValues { $0.removingNullValues() })
        case .array(let array):
            return .array(array.filter { !$0.isNull }.map { $0.removingNullValues() })
        default:
            return self
        }
    }

    /// Decodes a model from this value.
    public func decode<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: JSONEncoder().encode(self))
    }
}

extension JSON: Codable {
    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSON].self))
        }
    }

    /// Encodes the value as the matching JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// Creates ``null``.
    public init(nilLiteral: ()) { self = .null }
    /// Creates a ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates a ``number(_:)``.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// Creates a ``number(_:)``.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// Creates a ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates an ``array(_:)``.
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    /// Creates an ``object(_:)``; when a key repeats, the last value wins.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

import Foundation

/// A parsed JSON document as a Sendable value: what ``JSONResponseSerializer`` returns.
///
/// Read it with subscripts (`json["user"]?["tags"]?[0]`) and the typed accessors (``stringValue``,
/// ``doubleValue``, ``intValue``…), or decode a model from it with ``decode(_:decoder:)``.
///
/// Integers keep every digit: a number written without a fraction or exponent is ``integer(_:)`` when it fits
/// `Int64` and ``unsignedInteger(_:)`` when it fits only `UInt64` (`{"id": 9007199254740993}` reads back as that
/// id, where a `Double` would give …992), and is written back with the same digits. Every other number is
/// ``number(_:)``. Numbers compare by value whatever their case: `.integer(3) == .number(3)`.
public enum JSON: Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number with a fraction or an exponent, or an integer beyond 64 bits.
    case number(Double)
    /// An integer that fits `Int64`.
    case integer(Int64)
    /// An integer above `Int64.max` that fits `UInt64`.
    case unsignedInteger(UInt64)
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
    /// - Throws: `DecodingError.dataCorrupted` for malformed input, saying what is wrong and where; arrays and
    ///   objects nested deeper than 512 levels are refused.
    public init(data: Data) throws {
        self = try JSONParser.parse(data)
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

    /// The number as a `Double`, for any number (an integer beyond 2⁵³ is rounded).
    public var doubleValue: Double? {
        switch self {
        case .number(let value): return value
        case .integer(let value): return Double(value)
        case .unsignedInteger(let value): return Double(value)
        default: return nil
        }
    }

    /// The number as an `Int`, when it is integral and in range.
    public var intValue: Int? {
        int64Value.flatMap { Int(exactly: $0) }
    }

    /// The number as an `Int64`, when it is integral and in range.
    public var int64Value: Int64? {
        switch self {
        case .number(let value): return Int64(exactly: value)
        case .integer(let value): return value
        case .unsignedInteger(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// The number as a `UInt64`, when it is integral, not negative and in range.
    public var uint64Value: UInt64? {
        switch self {
        case .number(let value): return UInt64(exactly: value)
        case .integer(let value): return UInt64(exactly: value)
        case .unsignedInteger(let value): return value
        default: return nil
        }
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
    /// Decodes any JSON value from any decoder (``init(data:)`` reads JSON text faster, without this trial and
    /// error).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .unsignedInteger(value)
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
        case .integer(let value): try container.encode(value)
        case .unsignedInteger(let value): try container.encode(value)
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
    /// Creates an ``integer(_:)``.
    public init(integerLiteral value: Int64) { self = .integer(value) }
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

extension JSON: Hashable {
    /// Equal when both are the same kind and hold equal values; numbers compare by value across their cases.
    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default:
            guard let a = lhs.numericKey, let b = rhs.numericKey else { return false }
            return a == b
        }
    }

    /// Hashes the value so that values equal under ``==(_:_:)`` hash alike (numbers by value, whatever their case).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        case .number, .integer, .unsignedInteger: hasher.combine(numericKey)
        }
    }

    /// A number in one canonical form, so that equal values compare and hash alike whatever their case.
    private enum NumericKey: Hashable {
        case negative(Int64)
        case nonNegative(UInt64)
        case fractional(Double)
    }

    private var numericKey: NumericKey? {
        switch self {
        case .integer(let value):
            return value < 0 ? .negative(value) : .nonNegative(UInt64(value))
        case .unsignedInteger(let value):
            return .nonNegative(value)
        case .number(let value):
            if let exact = UInt64(exactly: value) { return .nonNegative(exact) }
            if let exact = Int64(exactly: value) { return .negative(exact) }
            return .fractional(value)
        default:
            return nil
        }
    }
}

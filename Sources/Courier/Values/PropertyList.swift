import Foundation

/// A property list as a Sendable value: what ``PropertyListResponseSerializer`` returns.
///
/// `PropertyListSerialization` returns `Any`, which cannot cross threads in Swift 6; this enum holds the same
/// values. A `<real>` with no fraction reads as ``integer(_:)``.
public enum PropertyList: Sendable, Hashable {
    /// `<string>`.
    case string(String)
    /// `<integer>`.
    case integer(Int)
    /// `<real>`.
    case real(Double)
    /// `<true/>` / `<false/>`.
    case bool(Bool)
    /// `<date>`.
    case date(Date)
    /// `<data>`.
    case data(Data)
    /// `<array>`.
    case array([PropertyList])
    /// `<dict>`.
    case dictionary([String: PropertyList])
}

extension PropertyList {
    /// Parses a property list in any format (XML, binary, OpenStep).
    ///
    /// - Throws: the decoder's `DecodingError` for malformed input.
    public init(data: Data) throws {
        self = try PropertyListDecoder().decode(PropertyList.self, from: data)
    }

    /// The value for `key` of a dictionary.
    public subscript(key: String) -> PropertyList? {
        guard case .dictionary(let dictionary) = self else { return nil }
        return dictionary[key]
    }

    /// The element at `index` of an array.
    public subscript(index: Int) -> PropertyList? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }
}

extension PropertyList: Codable {
    /// Decodes any property-list value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .real(value)
        } else if let value = try? container.decode(Date.self) {
            self = .date(value)
        } else if let value = try? container.decode(Data.self) {
            self = .data(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([PropertyList].self) {
            self = .array(value)
        } else {
            self = .dictionary(try container.decode([String: PropertyList].self))
        }
    }

    /// Encodes the value as the matching property-list type.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .real(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .date(let value): try container.encode(value)
        case .data(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .dictionary(let value): try container.encode(value)
        }
    }
}

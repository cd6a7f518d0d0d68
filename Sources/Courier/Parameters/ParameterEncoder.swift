import Foundation

/// Turns any `Encodable` value into a ``Parameter`` tree, the way `JSONEncoder` turns one into JSON.
///
/// ```swift
/// struct Search: Encodable {
///     var query: String
///     var page: Int
///     var tags: [String]
/// }
/// let parameters = try Parameter(encoding: Search(query: "swift", page: 2, tags: ["a", "b"]))
/// // ["query": "swift", "page": 2, "tags": ["a", "b"]]
/// ```
///
/// What each value becomes:
/// - `String` → ``Parameter/string(_:)``; `Bool` → ``Parameter/bool(_:)``;
/// - every integer type → ``Parameter/int(_:)`` (a value outside `Int`'s range throws
///   ``CourierError/parameterEncodingFailed(reason:underlyingError:)``);
/// - `Float`, `Double` and `Decimal` → ``Parameter/double(_:)``;
/// - `nil` written with `encodeNil` → ``Parameter/null`` (optional properties that are `nil` are left out by
///   synthesized `Encodable` conformances, so they do not appear at all);
/// - keyed containers → ``Parameter/dictionary(_:)``; unkeyed containers → ``Parameter/array(_:)``;
/// - `Date` and `Data` as ``dateEncodingStrategy`` and ``dataEncodingStrategy`` say; `URL` → its `absoluteString`;
/// - a ``Parameter`` nested in the value is kept exactly as it is;
/// - a value that writes nothing at all → an empty ``Parameter/dictionary(_:)``.
///
/// When a key is written twice the last write wins. Errors thrown by a value's `encode(to:)` propagate unchanged.
public struct ParameterEncoder: Sendable {
    /// How `Date` values are written.
    public enum DateEncodingStrategy: Sendable {
        /// What `Date`'s own `Encodable` conformance writes: a ``Parameter/double(_:)`` of seconds since
        /// 2001-01-01 00:00:00 UTC (`timeIntervalSinceReferenceDate`). The default.
        case deferredToDate
        /// A ``Parameter/double(_:)`` of seconds since 1970-01-01 00:00:00 UTC.
        case secondsSince1970
        /// A ``Parameter/double(_:)`` of milliseconds since 1970-01-01 00:00:00 UTC.
        case millisecondsSince1970
        /// A ``Parameter/string(_:)`` in ISO 8601 internet date-time form, in UTC, e.g. `2001-01-01T00:00:00Z`.
        case iso8601
        /// A ``Parameter/string(_:)`` made by the given closure.
        case formatted(@Sendable (Date) -> String)
    }

    /// How `Data` values are written.
    public enum DataEncodingStrategy: Sendable, Hashable {
        /// The bytes themselves, as ``Parameter/data(_:)``. The default.
        case raw
        /// A ``Parameter/string(_:)`` of the bytes in Base64.
        case base64
    }

    /// How the keys of keyed containers are written.
    public enum KeyEncodingStrategy: Sendable, Hashable {
        /// Each key exactly as its `CodingKey` spells it. The default.
        case useDefaultKeys
        /// Each key converted from camel case to snake case: `userID` → `user_id`, `myURLValue` → `my_url_value`.
        ///
        /// Words are split where a lower-case letter or digit is followed by an upper-case one, and before the last
        /// capital of an acronym that is followed by a lower-case letter; the words are lower-cased and joined
        /// with `_`. Leading and trailing underscores are kept. As with `JSONEncoder`, this applies to every keyed
        /// container, including the string keys of a `Dictionary`.
        case convertToSnakeCase
    }

    /// How `Date` values are written; ``DateEncodingStrategy/deferredToDate`` by default.
    public var dateEncodingStrategy: DateEncodingStrategy
    /// How `Data` values are written; ``DataEncodingStrategy/raw`` by default.
    public var dataEncodingStrategy: DataEncodingStrategy
    /// How keyed-container keys are written; ``KeyEncodingStrategy/useDefaultKeys`` by default.
    public var keyEncodingStrategy: KeyEncodingStrategy
    /// Values handed to every `encode(to:)` through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - dateEncodingStrategy: how `Date` values are written.
    ///   - dataEncodingStrategy: how `Data` values are written.
    ///   - keyEncodingStrategy: how keyed-container keys are written.
    ///   - userInfo: values handed to every `encode(to:)` through `Encoder.userInfo`.
    public init(
        dateEncodingStrategy: DateEncodingStrategy = .deferredToDate,
        dataEncodingStrategy: DataEncodingStrategy = .raw,
        keyEncodingStrategy: KeyEncodingStrategy = .useDefaultKeys,
        userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) {
        self.dateEncodingStrategy = dateEncodingStrategy
        self.dataEncodingStrategy = dataEncodingStrategy
        self.keyEncodingStrategy = keyEncodingStrategy
        self.userInfo = userInfo
    }

    /// Encodes a value as a ``Parameter`` tree.
    ///
    /// - Parameter value: the value to encode; it may be a model, a collection or a single scalar.
    /// - Returns: the tree; a value that writes nothing at all gives an empty ``Parameter/dictionary(_:)``.
    /// - Throws: ``CourierError/parameterEncodingFailed(reason:underlyingError:)`` for an integer outside `Int`'s
    ///   range, or whatever the value's own `encode(to:)` throws, unchanged.
    public func encode(_ value: some Encodable) throws -> Parameter {
        let root = EncodingNode()
        try ParameterTreeEncoder(node: root, options: self, codingPath: []).encodeValue(value)
        return root.parameter
    }
}

extension Parameter {
    /// Creates a tree from any `Encodable` value, with ``ParameterEncoder``'s rules.
    ///
    /// - Parameters:
    ///   - value: the value to encode.
    ///   - encoder: the encoder, which decides how dates, data and keys are written.
    /// - Throws: ``CourierError/parameterEncodingFailed(reason:underlyingError:)`` for an integer outside `Int`'s
    ///   range, or whatever the value's own `encode(to:)` throws, unchanged.
    public init(encoding value: some Encodable, encoder: ParameterEncoder = ParameterEncoder()) throws {
        self = try encoder.encode(value)
    }
}

extension ParameterEncoder.KeyEncodingStrategy {
    /// The key as this strategy writes it.
    func convert(_ key: String) -> String {
        switch self {
        case .useDefaultKeys: return key
        case .convertToSnakeCase: return Self.snakeCased(key)
        }
    }

    /// `JSONEncoder`'s camel-case to snake-case conversion, without doubling an underscore already present.
    static func snakeCased(_ key: String) -> String {
        let characters = Array(key)
        guard let first = characters.firstIndex(where: { $0 != "_" }),
            let last = characters.lastIndex(where: { $0 != "_" })
        else { return key }
        var result = String(characters[..<first])
        for index in first...last {
            let character = characters[index]
            if character.isUppercase, index > first {
                let previous = characters[index - 1]
                let nextIsLowercase = index < last && characters[index + 1].isLowercase
                if previous != "_", !previous.isUppercase || nextIsLowercase {
                    result.append("_")
                }
            }
            result += character.lowercased()
        }
        result += String(characters[(last + 1)...])
        return result
    }
}

import Foundation

extension JSON {
    /// The value as `JSONSerialization` gives it (`[String: Any]`, `[Any]`, `String`, `NSNumber`, `NSNull`), for code
    /// written against AFNetworking's Foundation objects:
    /// `(object as? JSON)?.foundationObject as? [String: Any]`. Integers keep their exact value; `true` and `false`
    /// are Foundation's booleans, never numbers.
    ///
    /// ``JSONResponseSerializer``'s object stays ``JSON``; ``FoundationJSONResponseSerializer`` delivers the
    /// Foundation form itself.
    public var foundationObject: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let value): return NSNumber(value: value)
        case .number(let value): return NSNumber(value: value)
        case .integer(let value): return NSNumber(value: value)
        case .unsignedInteger(let value): return NSNumber(value: value)
        case .string(let value): return value
        case .array(let values): return values.map(\.foundationObject)
        case .object(let members): return members.mapValues(\.foundationObject)
        }
    }
}

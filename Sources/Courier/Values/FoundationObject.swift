import Foundation

/// Foundation's object trees (what `JSONSerialization` and `PropertyListSerialization` give) in a form that can cross
/// threads: dictionaries become `[String: any Sendable]` and arrays `[any Sendable]`, so a callback's
/// `object as? [String: Any]` and `as? [Any]` still succeed, as they did with AFNetworking.
///
/// The leaves are kept as Foundation gave them (`NSNumber`, `String`, `NSNull`, `Date`, `Data`); anything else,
/// which neither serializer makes, becomes its description.
enum FoundationObject {
    /// `value` with every container rebuilt as its `Sendable` form.
    static func sendable(_ value: Any) -> any Sendable {
        switch value {
        case let object as [String: Any]: return object.mapValues(sendable)
        case let array as [Any]: return array.map(sendable)
        case let number as NSNumber: return number
        case let string as String: return string
        case let null as NSNull: return null
        case let date as Date: return date
        case let data as Data: return data
        default: return String(describing: value)
        }
    }

    /// AFNetworking's `AFJSONObjectByRemovingKeysWithNullValues`: keys whose value is `null` are removed from every
    /// object, at any depth; arrays keep their `null` elements and are walked into.
    static func removingKeysWithNullValues(_ value: any Sendable) -> any Sendable {
        switch value {
        case let object as [String: any Sendable]:
            return object.filter { !($0.value is NSNull) }.mapValues(removingKeysWithNullValues)
        case let array as [any Sendable]:
            return array.map(removingKeysWithNullValues)
        default:
            return value
        }
    }
}

import Foundation

/// Equality of two documents `JSONSerialization` made: objects by keys in any order, arrays in order, numbers by
/// value (`1` equals `1.0`), `true` never equal to `1`.
enum JSONEquality {
    static func equal(_ left: Any, _ right: Any) -> Bool {
        switch (left, right) {
        case (let a as [String: Any], let b as [String: Any]):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { equal(value, $0) } ?? false }
        case (let a as [Any], let b as [Any]):
            return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1) }
        case (let a as String, let b as String):
            return a == b
        case (is NSNull, is NSNull):
            return true
        case (let a as NSNumber, let b as NSNumber):
            if isBoolean(a) != isBoolean(b) { return false }
            return a == b
        default:
            return false
        }
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        #if canImport(Darwin)
            return CFGetTypeID(number) == CFBooleanGetTypeID()
        #else
            // swift-corelibs-foundation's JSONSerialization makes booleans of type `c` (char), numbers never.
            return String(cString: number.objCType) == "c"
        #endif
    }
}

import Courier

/// Data fields nested by HTTPie's key paths: `user[name]=x` is `{"user": {"name": "x"}}` and `tags[]=a` appends
/// to the array `tags`.
struct FieldTree {
    private(set) var parameter: Parameter = .dictionary([:])

    /// Puts `value` at the key path `path`.
    ///
    /// - Throws: ``CommandFailure`` when the path conflicts with a value already there (`a=1 a[b]=2`).
    mutating func insert(_ value: Parameter, at path: String) throws {
        let keys = Self.keys(of: path)
        parameter = try Self.inserting(value, into: parameter, keys: keys[...], path: path)
    }

    /// `a[b][]` → `["a", "b", ""]`; a name without brackets is one key, brackets and all if unbalanced.
    static func keys(of path: String) -> [String] {
        guard let open = path.firstIndex(of: "["), open != path.startIndex, path.hasSuffix("]") else { return [path] }
        var keys = [String(path[..<open])]
        var rest = path[open...]
        while rest.first == "[", let close = rest.firstIndex(of: "]") {
            keys.append(String(rest[rest.index(after: rest.startIndex)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return rest.isEmpty ? keys : [path]
    }

    private static func inserting(
        _ value: Parameter, into node: Parameter?, keys: ArraySlice<String>, path: String
    ) throws -> Parameter {
        guard let key = keys.first else { return value }
        let rest = keys.dropFirst()
        if key.isEmpty, keys.startIndex != 0 {
            var elements: [Parameter]
            switch node {
            case nil: elements = []
            case .array(let existing): elements = existing
            default: throw conflict(path)
            }
            elements.append(try inserting(value, into: nil, keys: rest, path: path))
            return .array(elements)
        }
        var dictionary: [String: Parameter]
        switch node {
        case nil: dictionary = [:]
        case .dictionary(let existing): dictionary = existing
        default: throw conflict(path)
        }
        if rest.isEmpty, dictionary[key] != nil {
            // A repeated plain name collects its values, as HTTPie does.
            if case .array(var existing) = dictionary[key] {
                existing.append(value)
                dictionary[key] = .array(existing)
            } else if let existing = dictionary[key] {
                dictionary[key] = .array([existing, value])
            }
            return .dictionary(dictionary)
        }
        dictionary[key] = try inserting(value, into: dictionary[key], keys: rest, path: path)
        return .dictionary(dictionary)
    }

    private static func conflict(_ path: String) -> CommandFailure {
        CommandFailure(.failure, "the data field \(path) conflicts with another field of the same name")
    }
}

extension Parameter {
    /// The parameter for a JSON value; whole numbers become integers so they are written without a fraction.
    init(json: JSON) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .string(let value): self = .string(value)
        case .integer(let value) where Int(exactly: value) != nil:
            self = .int(Int(value))
        case .integer, .unsignedInteger:
            self = .double(json.doubleValue ?? 0)
        case .number(let value):
            if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
                self = .int(Int(value))
            } else {
                self = .double(value)
            }
        case .array(let values): self = .array(values.map(Parameter.init(json:)))
        case .object(let values): self = .dictionary(values.mapValues(Parameter.init(json:)))
        }
    }
}

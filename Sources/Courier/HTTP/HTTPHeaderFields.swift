/// An ordered list of HTTP header fields with case-insensitive names.
///
/// Setting a field replaces any field of the same name (compared case-insensitively) in place, so order is the
/// order in which names were first set.
///
/// Every operation costs at most time linear in the number of fields, and reading or setting one field by name is
/// constant time on average once the list is long: a server can send thousands of distinct names, and code that
/// looks each one up must not turn that into quadratic work.
public struct HTTPHeaderFields: Sendable {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The name as it was set.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields, in order.
    public private(set) var fields: [Field] = []
    /// Where the first field of each name (in any case) is, once there are more than ``indexedFrom`` fields; below
    /// that, a scan is cheaper than hashing the name.
    private var positions: [FieldName: Int]?

    /// The smallest list that keeps ``positions``.
    private static let indexedFrom = 16

    /// Creates an empty list.
    public init() {}

    /// Creates a list from fields; a later field replaces an earlier one of the same name.
    public init(_ fields: some Sequence<Field>) {
        self.fields.reserveCapacity(fields.underestimatedCount)
        for field in fields { self[field.name] = field.value }
    }

    /// The value of the field with this name (any case), or `nil`; setting `nil` removes the field.
    public subscript(name: String) -> String? {
        get { firstIndex(of: name).map { fields[$0].value } }
        set {
            guard let index = firstIndex(of: name) else {
                if let newValue { add(name: name, value: newValue) }
                return
            }
            if let newValue {
                fields[index] = Field(name: name, value: newValue)
            } else {
                fields.remove(at: index)
                reindex()
            }
        }
    }

    /// Makes room for `count` fields in all.
    mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    /// Appends a field even when one of the same name exists, as responses repeat `Set-Cookie`.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
        if positions != nil {
            // The first field of a name stays the one found.
            let key = FieldName(name)
            if positions?[key] == nil { positions?[key] = fields.count - 1 }
        } else if fields.count > Self.indexedFrom {
            reindex()
        }
    }

    /// The values of every field with this name (any case), in order.
    public func values(for name: String) -> [String] {
        if let positions, positions[FieldName(name)] == nil { return [] }
        return fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// The fields as a dictionary keyed by name as set.
    public var dictionary: [String: String] {
        var dictionary = [String: String](minimumCapacity: fields.count)
        for field in fields { dictionary[field.name] = field.value }
        return dictionary
    }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The position of the first field named `name` (any case).
    private func firstIndex(of name: String) -> Int? {
        if let positions { return positions[FieldName(name)] }
        return fields.firstIndex { $0.name.caseInsensitiveEquals(name) }
    }

    /// Makes ``positions`` again from the fields (after a removal moved the ones behind it), or drops it when the
    /// list has become short.
    private mutating func reindex() {
        guard fields.count > Self.indexedFrom else {
            positions = nil
            return
        }
        var positions = [FieldName: Int](minimumCapacity: fields.count)
        for (index, field) in fields.enumerated() {
            let key = FieldName(field.name)
            if positions[key] == nil { positions[key] = index }
        }
        self.positions = positions
    }
}

extension HTTPHeaderFields: Hashable {
    /// Lists are equal when their fields are, in order.
    public static func == (lhs: HTTPHeaderFields, rhs: HTTPHeaderFields) -> Bool {
        lhs.fields == rhs.fields
    }

    /// Hashes the fields, in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fields)
    }
}

extension HTTPHeaderFields: Sequence {
    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

extension HTTPHeaderFields: ExpressibleByDictionaryLiteral {
    /// Creates a list from `name: value` pairs, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { Field(name: $0.0, value: $0.1) })
    }
}

extension StringProtocol {
    /// ASCII case-insensitive equality, as HTTP field names compare.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        let lhs = utf8
        let rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        return zip(lhs, rhs).allSatisfy { asciiLower($0) == asciiLower($1) }
    }
}

/// The byte with ASCII upper-case letters lowered.
func asciiLower(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
}

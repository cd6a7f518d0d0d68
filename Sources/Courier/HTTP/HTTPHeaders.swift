/// An ordered list of HTTP header fields with case-insensitive names.
///
/// Setting a field replaces any field of the same name (compared case-insensitively) in place, so order is the
/// order in which names were first set.
public struct HTTPHeaders: Sendable, Hashable {
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

    /// Creates an empty list.
    public init() {}

    /// Creates a list from fields; a later field replaces an earlier one of the same name.
    public init(_ fields: some Sequence<Field>) {
        self.fields.reserveCapacity(fields.underestimatedCount)
        for field in fields { self[field.name] = field.value }
    }

    /// The value of the field with this name (any case), or `nil`; setting `nil` removes the field.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            guard let index = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) else {
                if let newValue { fields.append(Field(name: name, value: newValue)) }
                return
            }
            if let newValue {
                fields[index] = Field(name: name, value: newValue)
            } else {
                fields.remove(at: index)
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
    }

    /// The values of every field with this name (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// The fields as a dictionary keyed by name as set.
    public var dictionary: [String: String] {
        Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }
}

extension HTTPHeaders: Sequence {
    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
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

private func asciiLower(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
}

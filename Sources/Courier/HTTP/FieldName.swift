/// A field name that hashes and compares without regard to ASCII case, as HTTP field names compare, without
/// making a lower-cased copy.
struct FieldName: Hashable, Sendable {
    let name: String

    init(_ name: String) {
        self.name = name
    }

    static func == (lhs: FieldName, rhs: FieldName) -> Bool {
        lhs.name.caseInsensitiveEquals(rhs.name)
    }

    func hash(into hasher: inout Hasher) {
        for byte in name.utf8 { hasher.combine(asciiLower(byte)) }
        hasher.combine(0xFF as UInt8)  // no name holds this byte in UTF-8: it ends the name
    }
}

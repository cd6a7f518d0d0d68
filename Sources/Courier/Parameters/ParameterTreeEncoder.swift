import Foundation

// MARK: - Node tree

/// One value of the tree under construction. A reference type, so that containers, nested containers and super
/// encoders can all write into the same place; it is turned into a ``Parameter`` once encoding has finished.
final class EncodingNode {
    enum Content {
        case empty
        case leaf(Parameter)
        case keyed([String: EncodingNode])
        case unkeyed([EncodingNode])
    }

    private var content: Content

    init(_ content: Content = .empty) {
        self.content = content
    }

    /// Makes the node keyed, keeping its entries if it already was.
    func makeKeyed() {
        if case .keyed = content { return }
        content = .keyed([:])
    }

    /// Makes the node unkeyed, keeping its elements if it already was.
    func makeUnkeyed() {
        if case .unkeyed = content { return }
        content = .unkeyed([])
    }

    /// Replaces whatever the node holds with a leaf.
    func setLeaf(_ value: Parameter) {
        content = .leaf(value)
    }

    /// Stores `child` under `key`, replacing an earlier entry; the node becomes keyed if it was not.
    func setChild(_ child: EncodingNode, forKey key: String) {
        guard case .keyed(var children) = content else {
            content = .keyed([key: child])
            return
        }
        content = .empty  // Drops the enum's reference so the dictionary is mutated in place.
        children[key] = child
        content = .keyed(children)
    }

    /// The entry under `key`, when the node is keyed and has one.
    func child(forKey key: String) -> EncodingNode? {
        guard case .keyed(let children) = content else { return nil }
        return children[key]
    }

    /// Appends `element`; the node becomes unkeyed if it was not.
    func append(_ element: EncodingNode) {
        guard case .unkeyed(var elements) = content else {
            content = .unkeyed([element])
            return
        }
        content = .empty  // Drops the enum's reference so the array is mutated in place.
        elements.append(element)
        content = .unkeyed(elements)
    }

    /// The number of elements of an unkeyed node (zero for any other).
    var count: Int {
        guard case .unkeyed(let elements) = content else { return 0 }
        return elements.count
    }

    /// The finished value. A node nobody wrote to is an empty dictionary, as `JSONEncoder` writes `{}`.
    var parameter: Parameter {
        switch content {
        case .empty: return .dictionary([:])
        case .leaf(let value): return value
        case .keyed(let children): return .dictionary(children.mapValues(\.parameter))
        case .unkeyed(let elements): return .array(elements.map(\.parameter))
        }
    }
}

// MARK: - Encoder

/// The `Encoder` handed to `encode(to:)`: it writes into one node of the tree.
struct ParameterTreeEncoder: Encoder {
    let node: EncodingNode
    let options: ParameterEncoder
    let codingPath: [any CodingKey]

    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeKeyed()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, options: options, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeUnkeyed()
        return UnkeyedContainer(node: node, options: options, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(node: node, options: options, codingPath: codingPath)
    }

    /// Writes `value` into this encoder's node, handling the types with strategies or a fixed form before
    /// deferring to the value's own `encode(to:)`.
    func encodeValue<T: Encodable>(_ value: T) throws {
        switch value {
        case let parameter as Parameter:
            node.setLeaf(parameter)
        case let date as Date:
            try encodeDate(date)
        case let data as Data:
            switch options.dataEncodingStrategy {
            case .raw: node.setLeaf(.data(data))
            case .base64: node.setLeaf(.string(data.base64EncodedString()))
            }
        case let url as URL:
            node.setLeaf(.string(url.absoluteString))
        case let decimal as Decimal:
            node.setLeaf(.double(Self.double(decimal)))
        default:
            try value.encode(to: self)
        }
    }

    private func encodeDate(_ date: Date) throws {
        switch options.dateEncodingStrategy {
        case .deferredToDate:
            try date.encode(to: self)
        case .secondsSince1970:
            node.setLeaf(.double(date.timeIntervalSince1970))
        case .millisecondsSince1970:
            node.setLeaf(.double(date.timeIntervalSince1970 * 1000))
        case .iso8601:
            node.setLeaf(.string(Date.ISO8601FormatStyle().format(date)))
        case .formatted(let format):
            node.setLeaf(.string(format(date)))
        }
    }

    /// The nearest `Double`, parsed from the exact decimal text so no precision is lost on the way.
    private static func double(_ decimal: Decimal) -> Double {
        Double(decimal.description) ?? NSDecimalNumber(decimal: decimal).doubleValue
    }

    /// A `Float` as the `Double` its shortest text spells (`0.1` stays `0.1`, as `NSNumber` prints it), rather
    /// than the binary widening `0.10000000149011612`.
    static func double(_ float: Float) -> Double {
        Double(float.description) ?? Double(float)
    }

    /// An integer as ``Parameter/int(_:)``, or an error when it does not fit in `Int`.
    static func integer<T: BinaryInteger>(_ value: T, codingPath: [any CodingKey]) throws -> Parameter {
        if let int = Int(exactly: value) { return .int(int) }
        let path = codingPath.map(\.stringValue).joined(separator: ".")
        let location = path.isEmpty ? "" : " at “\(path)”"
        let reason = "The \(T.self) value \(value)\(location) does not fit in an Int parameter."
        let context = EncodingError.Context(codingPath: codingPath, debugDescription: reason)
        throw CourierError.parameterEncodingFailed(
            reason: reason,
            underlyingError: EncodingError.invalidValue(value, context)
        )
    }
}

// MARK: - Containers

struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol, KeyedLeafEncoding {
    let node: EncodingNode
    let options: ParameterEncoder
    let codingPath: [any CodingKey]

    private func name(_ key: some CodingKey) -> String {
        options.keyEncodingStrategy.convert(key.stringValue)
    }

    func setLeaf(_ value: Parameter, forKey key: Key) {
        node.setChild(EncodingNode(.leaf(value)), forKey: name(key))
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try encodeInteger(value, forKey: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let child = EncodingNode()
        node.setChild(child, forKey: name(key))
        try ParameterTreeEncoder(node: child, options: options, codingPath: codingPath + [key]).encodeValue(value)
    }

    /// The node under `key` for a nested container: an existing entry is reused (and keeps its contents if it is
    /// already of the requested kind), as `JSONEncoder` does.
    private func nestedNode(forKey key: Key) -> EncodingNode {
        if let existing = node.child(forKey: name(key)) { return existing }
        let child = EncodingNode()
        node.setChild(child, forKey: name(key))
        return child
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = nestedNode(forKey: key)
        child.makeKeyed()
        return KeyedEncodingContainer(
            KeyedContainer<NestedKey>(node: child, options: options, codingPath: codingPath + [key])
        )
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = nestedNode(forKey: key)
        child.makeUnkeyed()
        return UnkeyedContainer(node: child, options: options, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(named: AnyCodingKey("super"))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(named: key)
    }

    /// A fresh encoder whose value replaces whatever was under `key`.
    private func superEncoder(named key: some CodingKey) -> any Encoder {
        let child = EncodingNode()
        node.setChild(child, forKey: name(key))
        return ParameterTreeEncoder(node: child, options: options, codingPath: codingPath + [key])
    }
}

struct UnkeyedContainer: UnkeyedEncodingContainer, LeafEncoding {
    let node: EncodingNode
    let options: ParameterEncoder
    let codingPath: [any CodingKey]

    var count: Int { node.count }

    /// The key of the next element, for coding paths.
    private var nextKey: AnyCodingKey { AnyCodingKey(intValue: node.count) }

    /// The path of the element a leaf becomes.
    var leafPath: [any CodingKey] { codingPath + [nextKey] }

    func encodeLeaf(_ value: Parameter) { node.append(EncodingNode(.leaf(value))) }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { try encodeInteger(value) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { try encodeInteger(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = codingPath + [nextKey]
        let child = EncodingNode()
        node.append(child)
        try ParameterTreeEncoder(node: child, options: options, codingPath: path).encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [nextKey]
        let child = EncodingNode(.keyed([:]))
        node.append(child)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(node: child, options: options, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [nextKey]
        let child = EncodingNode(.unkeyed([]))
        node.append(child)
        return UnkeyedContainer(node: child, options: options, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = codingPath + [nextKey]
        let child = EncodingNode()
        node.append(child)
        return ParameterTreeEncoder(node: child, options: options, codingPath: path)
    }
}

struct SingleValueContainer: SingleValueEncodingContainer, LeafEncoding {
    let node: EncodingNode
    let options: ParameterEncoder
    let codingPath: [any CodingKey]

    var leafPath: [any CodingKey] { codingPath }

    func encodeLeaf(_ value: Parameter) { node.setLeaf(value) }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { try encodeInteger(value) }
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { try encodeInteger(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try ParameterTreeEncoder(node: node, options: options, codingPath: codingPath).encodeValue(value)
    }
}

/// A container that turns each value it is given into one leaf: Codable's unkeyed and single-value containers
/// require an `encode` per primitive type, written here once for both.
protocol LeafEncoding {
    /// The coding path of the leaf the next value becomes, for errors.
    var leafPath: [any CodingKey] { get }
    /// Stores the leaf.
    func encodeLeaf(_ value: Parameter)
}

extension LeafEncoding {
    mutating func encodeNil() throws { encodeLeaf(.null) }
    mutating func encode(_ value: Bool) throws { encodeLeaf(.bool(value)) }
    mutating func encode(_ value: String) throws { encodeLeaf(.string(value)) }
    mutating func encode(_ value: Double) throws { encodeLeaf(.double(value)) }
    mutating func encode(_ value: Float) throws { encodeLeaf(.double(ParameterTreeEncoder.double(value))) }
    mutating func encode(_ value: Int) throws { encodeLeaf(.int(value)) }
    mutating func encode(_ value: Int8) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int16) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int32) throws { try encodeInteger(value) }
    mutating func encode(_ value: Int64) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt8) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt16) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt32) throws { try encodeInteger(value) }
    mutating func encode(_ value: UInt64) throws { try encodeInteger(value) }

    func encodeInteger(_ value: some BinaryInteger) throws {
        encodeLeaf(try ParameterTreeEncoder.integer(value, codingPath: leafPath))
    }
}

/// ``LeafEncoding`` for the keyed container, whose every `encode` names a key.
protocol KeyedLeafEncoding {
    associatedtype Key: CodingKey
    var codingPath: [any CodingKey] { get }
    /// Stores the leaf under `key`.
    func setLeaf(_ value: Parameter, forKey key: Key)
}

extension KeyedLeafEncoding {
    mutating func encodeNil(forKey key: Key) throws { setLeaf(.null, forKey: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { setLeaf(.bool(value), forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { setLeaf(.string(value), forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { setLeaf(.double(value), forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        setLeaf(.double(ParameterTreeEncoder.double(value)), forKey: key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { setLeaf(.int(value), forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encodeInteger(value, forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try encodeInteger(value, forKey: key) }

    func encodeInteger(_ value: some BinaryInteger, forKey key: Key) throws {
        setLeaf(try ParameterTreeEncoder.integer(value, codingPath: codingPath + [key]), forKey: key)
    }
}

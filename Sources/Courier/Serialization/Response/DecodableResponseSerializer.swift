import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Something that decodes a `Decodable` value from bytes: `JSONDecoder` and `PropertyListDecoder` are ones.
public protocol DataDecoder: Sendable {
    /// Decodes a value of `type` from `data`.
    func decode<D: Decodable>(_ type: D.Type, from data: Data) throws -> D
}

extension JSONDecoder: DataDecoder {
    /// The decoder behind every `decoder: any DataDecoder = .defaultJSON` argument: one default-configured decoder
    /// for the process rather than one made per call (an allocation and a few hundred bytes a request waiting for
    /// its response would keep). Decoding does not change a decoder, so one serves every thread at once.
    @usableFromInline
    static let courierDefault = JSONDecoder()
}

extension DataDecoder where Self == JSONDecoder {
    /// A default-configured `JSONDecoder`, shared; what the `decoder:` arguments default to.
    public static var defaultJSON: JSONDecoder { .courierDefault }
}
extension PropertyListDecoder: DataDecoder {}

/// A type that stands for "no body", so an empty response can decode (e.g. a `204 No Content`).
public protocol EmptyResponse {
    /// The value an empty body decodes to.
    static func emptyValue() -> Self
}

/// A `Decodable` placeholder for responses without a body.
public struct Empty: Codable, Sendable, Hashable, EmptyResponse {
    /// Creates the value.
    public init() {}

    /// The empty value.
    public static func emptyValue() -> Empty { Empty() }
}

/// Validates the response and decodes a model from its body, with a `JSONDecoder` unless told otherwise.
///
/// Validation and errors follow ``JSONResponseSerializer``: a status error whose body decodes carries the decoded
/// model in ``CourierError/serializedObject``. An empty body decodes only into a type that conforms to
/// ``EmptyResponse`` (such as ``Empty``); for any other type it is an error with code -1016.
public struct DecodableResponseSerializer<T: Decodable & Sendable>: ResponseValidating {
    /// The acceptable status codes; default 200–299.
    public var acceptableStatusCodes: IndexSet?
    /// The acceptable MIME types; default the JSON types.
    public var acceptableContentTypes: Set<String>?
    /// The decoder.
    public var decoder: any DataDecoder

    /// Creates a serializer.
    public init(
        _ type: T.Type = T.self,
        decoder: any DataDecoder = .defaultJSON,
        acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
        acceptableContentTypes: Set<String>? = JSONResponseSerializer.jsonContentTypes
    ) {
        self.decoder = decoder
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and decodes the body.
    ///
    /// Reads the head; Foundation's `HTTPURLResponse` is made only for an error's context.
    public func serialize(head: ResponseHead?, data: Data?) throws -> T {
        let decoded = try validateAndParse(head: head, data: data, failureReason: unreadableDataReason) {
            try decoder.decode(T.self, from: $0)
        }
        if let decoded { return decoded }
        if let empty = T.self as? any EmptyResponse.Type, let value = empty.emptyValue() as? T { return value }
        throw CourierError.responseSerializationFailed(
            reason: "The response has no body to decode \(T.self) from.",
            context: CourierError.Context(response: head?.response, data: data), underlyingError: nil)
    }
}

extension DecodableResponseSerializer: HeadSerializing {}

import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Validates the response and parses its body as ``JSON`` (`AFJSONResponseSerializer`).
///
/// - An empty body, or a single space, gives `nil` without an error.
/// - A status error with a JSON body still parses it: the thrown ``CourierError`` carries the raw data
///   (``CourierError/responseData``) and the parsed JSON (``CourierError/serializedObject``).
/// - A body that does not parse is an error with code -1016 and the parser's error underneath.
public struct JSONResponseSerializer: ResponseValidating {
    /// The acceptable status codes; default 200–299.
    public var acceptableStatusCodes: IndexSet?
    /// The acceptable MIME types; default `application/json`, `text/json`, `text/javascript`.
    public var acceptableContentTypes: Set<String>?
    /// Whether nulls are removed from objects and arrays, recursively (``JSON/removingNullValues()``).
    public var removesKeysWithNullValues: Bool

    /// The MIME types JSON is served as.
    public static let jsonContentTypes: Set<String> = ["application/json", "text/json", "text/javascript"]

    /// Creates a serializer.
    public init(
        acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
        acceptableContentTypes: Set<String>? = jsonContentTypes,
        removesKeysWithNullValues: Bool = false
    ) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
        self.removesKeysWithNullValues = removesKeysWithNullValues
    }

    /// Validates and parses the body.
    ///
    /// Reads the head; Foundation's `HTTPURLResponse` is made only for an error's context.
    public func serialize(head: ResponseHead?, data: Data?) throws -> JSON? {
        try validateAndParse(head: head, data: data, failureReason: unreadableDataReason) { data in
            let json = try JSON(data: data)
            return removesKeysWithNullValues ? json.removingNullValues() : json
        }
    }
}

extension JSONResponseSerializer: HeadSerializing {}

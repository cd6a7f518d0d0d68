import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `AFJSONResponseSerializer` with its `readingOptions`, for AFNetworking code that casts the response object to
/// Foundation's types: the body is read by `JSONSerialization` and delivered as `[String: any Sendable]`,
/// `[any Sendable]`, `String`, `NSNumber` or `NSNull`, so `responseObject as? [String: Any]` works as it did.
///
/// ```swift
/// manager.responseSerializer = FoundationJSONResponseSerializer(readingOptions: .fragmentsAllowed)
/// ```
///
/// Validation is ``JSONResponseSerializer``'s (status 200–299; `application/json`, `text/json`,
/// `text/javascript`). An empty body, or a single space, gives `nil`. A malformed body is
/// ``CourierError/responseSerializationFailed(reason:context:underlyingError:)`` with `JSONSerialization`'s error
/// underneath; its ``CourierError/afNetworkingError`` is that error itself (`NSCocoaErrorDomain` 3840), with the
/// status error under `NSUnderlyingErrorKey` when the status was also unacceptable, as AFNetworking nests them.
/// Use ``JSONResponseSerializer`` for new code: its ``JSON`` is typed and keeps every integer exact.
public struct FoundationJSONResponseSerializer: ResponseValidating {
    /// The acceptable status codes; default 200–299.
    public var acceptableStatusCodes: IndexSet?
    /// The acceptable MIME types; default ``JSONResponseSerializer/jsonContentTypes``.
    public var acceptableContentTypes: Set<String>?
    /// `JSONSerialization`'s options (AFNetworking's `readingOptions`); default none, so a top-level scalar is
    /// refused unless `.fragmentsAllowed` is given. `.mutableContainers` changes nothing: the containers delivered
    /// are Swift values, which a caller copies to change.
    public var readingOptions: JSONSerialization.ReadingOptions
    /// Whether keys with `null` values are removed from objects at any depth (AFNetworking's
    /// `removesKeysWithNullValues`; arrays keep their `null`s).
    public var removesKeysWithNullValues: Bool

    /// Creates a serializer.
    public init(
        readingOptions: JSONSerialization.ReadingOptions = [],
        acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
        acceptableContentTypes: Set<String>? = JSONResponseSerializer.jsonContentTypes,
        removesKeysWithNullValues: Bool = false
    ) {
        self.readingOptions = readingOptions
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
        self.removesKeysWithNullValues = removesKeysWithNullValues
    }

    /// Validates and parses the body.
    public func serialize(head: ResponseHead?, data: Data?) throws -> (any Sendable)? {
        let options = readingOptions.subtracting(.mutableContainers)
        let object: (any Sendable)?? = try validateAndParse(head: head, data: data, failureReason: unreadableDataReason)
        {
            let object = FoundationObject.sendable(try JSONSerialization.jsonObject(with: $0, options: options))
            return .some(removesKeysWithNullValues ? FoundationObject.removingKeysWithNullValues(object) : object)
        }
        return object ?? nil
    }
}

extension FoundationJSONResponseSerializer: HeadSerializing {}

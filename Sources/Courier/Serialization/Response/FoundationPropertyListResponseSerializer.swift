import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `AFPropertyListResponseSerializer` with its `readOptions`, for AFNetworking code that casts the response object to
/// Foundation's types: the body is read by `PropertyListSerialization` and delivered as `[String: any Sendable]`,
/// `[any Sendable]`, `String`, `NSNumber`, `Date` or `Data`, so `responseObject as? [String: Any]` works as it did.
///
/// Validation is ``PropertyListResponseSerializer``'s (status 200–299, `application/x-plist`); a `nil` or empty
/// body gives `nil`. A malformed body is ``CourierError/responseSerializationFailed(reason:context:underlyingError:)``
/// with `PropertyListSerialization`'s error underneath, and ``CourierError/afNetworkingError`` gives that error
/// itself, as AFNetworking does. Use ``PropertyListResponseSerializer`` for new code: its ``PropertyList`` is typed.
public struct FoundationPropertyListResponseSerializer: ResponseValidating {
    /// The acceptable status codes; default 200–299.
    public var acceptableStatusCodes: IndexSet?
    /// The acceptable MIME types; default `application/x-plist`.
    public var acceptableContentTypes: Set<String>?
    /// `PropertyListSerialization`'s options (AFNetworking's `readOptions`); the containers delivered are Swift
    /// values whatever they say.
    public var readOptions: PropertyListSerialization.ReadOptions

    /// Creates a serializer.
    public init(
        readOptions: PropertyListSerialization.ReadOptions = [],
        acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
        acceptableContentTypes: Set<String>? = ["application/x-plist"]
    ) {
        self.readOptions = readOptions
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and parses the body.
    public func serialize(head: ResponseHead?, data: Data?) throws -> (any Sendable)? {
        let options = readOptions
        let object: (any Sendable)?? = try validateAndParse(head: head, data: data, failureReason: unreadableDataReason)
        {
            .some(
                FoundationObject.sendable(
                    try PropertyListSerialization.propertyList(from: $0, options: options, format: nil)))
        }
        return object ?? nil
    }
}

extension FoundationPropertyListResponseSerializer: HeadSerializing {}

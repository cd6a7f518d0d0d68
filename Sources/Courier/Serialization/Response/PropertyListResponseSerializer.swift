import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Validates the response and parses its body as a ``PropertyList`` (`AFPropertyListResponseSerializer`).
///
/// A `nil` or empty body gives `nil`; a malformed one is an error with code -1016 and the parser's error underneath.
public struct PropertyListResponseSerializer: ResponseValidating {
    /// The acceptable status codes; default 200–299.
    public var acceptableStatusCodes: IndexSet?
    /// The acceptable MIME types; default `application/x-plist`.
    public var acceptableContentTypes: Set<String>?

    /// Creates a serializer.
    public init(
        acceptableStatusCodes: IndexSet? = .successfulStatusCodes,
        acceptableContentTypes: Set<String>? = ["application/x-plist"]
    ) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and parses the body.
    ///
    /// Reads the head; Foundation's `HTTPURLResponse` is made only for an error's context.
    public func serialize(head: ResponseHead?, data: Data?) throws -> PropertyList? {
        try validateAndParse(head: head, data: data, failureReason: unreadableDataReason) {
            try PropertyList(data: $0)
        }
    }
}

extension PropertyListResponseSerializer: HeadSerializing {}

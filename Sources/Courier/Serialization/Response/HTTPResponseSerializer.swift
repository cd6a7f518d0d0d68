import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Validates the response and returns the raw body (`AFHTTPResponseSerializer`).
///
/// Accepts status codes 200–299 and any content type by default. When validation fails, the thrown error carries
/// the response and the body (``CourierError/responseData``).
public struct HTTPResponseSerializer: ResponseValidating {
    /// The acceptable status codes; default 200–299, `nil` accepts any.
    public var acceptableStatusCodes: IndexSet?
    /// The acceptable MIME types; default `nil`, which accepts any.
    public var acceptableContentTypes: Set<String>?

    /// Creates a serializer.
    public init(acceptableStatusCodes: IndexSet? = .successfulStatusCodes, acceptableContentTypes: Set<String>? = nil) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and returns `data` unchanged. An unacceptable status throws with the body as the error's
    /// ``CourierError/serializedObject`` too, so a failed task's completion gets the body as its object beside the
    /// error, as AFNetworking's `AFHTTPResponseSerializer` gives both.
    ///
    /// Reads the head; Foundation's `HTTPURLResponse` is made only for an error's context.
    public func serialize(head: ResponseHead?, data: Data?) throws -> Data? {
        do {
            try validate(head: head, data: data)
        } catch let error as CourierError {
            guard case .unacceptableStatusCode = error, let data else { throw error }
            throw error.withContext { $0.serializedObject = data }
        }
        return data
    }
}

extension HTTPResponseSerializer: HeadSerializing {}

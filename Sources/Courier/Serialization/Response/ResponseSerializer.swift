import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Validates a response and turns its body into a value (`AFURLResponseSerialization`).
///
/// Serializers are values, safe to use from any thread; sessions run them off the transport's threads.
public protocol ResponseSerializer: Sendable {
    /// What the body becomes.
    associatedtype SerializedObject: Sendable

    /// Validates the response and serializes its body: the Foundation-facing entry, as AFNetworking's.
    ///
    /// - Throws: ``CourierError`` with the response and data attached when validation or parsing fails.
    func serialize(response: HTTPURLResponse?, data: Data?) throws -> SerializedObject

    /// Validates the response head as the transport delivered it and serializes the body: the entry sessions use.
    ///
    /// The built-in serializers read the status and header fields from the head and make Foundation's
    /// `HTTPURLResponse` (``ResponseHead/response``) only for an error's context. The default implementation calls
    /// ``serialize(response:data:)`` with that `HTTPURLResponse`, so a serializer written against Foundation works
    /// unchanged; implement this one too to skip making it.
    ///
    /// - Throws: ``CourierError`` with the response and data attached when validation or parsing fails.
    func serialize(head: ResponseHead?, data: Data?) throws -> SerializedObject
}

extension ResponseSerializer {
    /// Calls ``serialize(response:data:)`` with Foundation's form of the head.
    public func serialize(head: ResponseHead?, data: Data?) throws -> SerializedObject {
        try serialize(response: head?.response, data: data)
    }
}

/// A serializer written against the head: it implements ``ResponseSerializer/serialize(head:data:)`` and gets the
/// Foundation entry from it. Every built-in serializer is one. (Internal, so that no serializer can conform without
/// implementing the head entry, which would leave the two defaults calling each other.)
protocol HeadSerializing: ResponseSerializer {}

extension HeadSerializing {
    /// Serializes with Foundation's form of the response, read as a head (see ``serialize(head:data:)``).
    public func serialize(response: HTTPURLResponse?, data: Data?) throws -> SerializedObject {
        try serialize(head: response.map(ResponseHead.init), data: data)
    }
}

/// A response serializer that validates status codes and content types as `AFHTTPResponseSerializer` does.
///
/// Non-HTTP responses (a `nil` response) are always valid. A `nil` set disables its check.
public protocol ResponseValidating: ResponseSerializer {
    /// The status codes that are valid; `nil` accepts any.
    var acceptableStatusCodes: IndexSet? { get }
    /// The MIME types (without parameters, compared case-insensitively) that are valid; `nil` accepts any.
    var acceptableContentTypes: Set<String>? { get }
}

extension ResponseValidating {
    /// Throws the error ``validationError(head:data:)`` finds, if any.
    public func validate(head: ResponseHead?, data: Data?) throws {
        if let error = validationError(head: head, data: data) { throw error }
    }

    /// Throws the error ``validationError(response:data:)`` finds, if any.
    public func validate(response: HTTPURLResponse?, data: Data?) throws {
        try validate(head: response.map(ResponseHead.init), data: data)
    }

    /// The validation error for a response, or `nil` when it is valid or its only fault carries no error.
    ///
    /// AFNetworking's rules:
    /// 1. A MIME type outside ``acceptableContentTypes`` is invalid unless the MIME type is absent and the body is
    ///    empty; but the error (code -1016) is only raised when the body is non-empty, so an empty body with an
    ///    unacceptable type is not an error.
    /// 2. A status outside ``acceptableStatusCodes`` is an error (code -1011); a content-type error found in step 1
    ///    becomes its underlying error.
    ///
    /// The head's `HTTPURLResponse` is made only for an error's context.
    public func validationError(head: ResponseHead?, data: Data?) -> CourierError? {
        guard let head else { return nil }
        let hasBody = !(data?.isEmpty ?? true)
        var contentTypeHeader: String?
        var contentTypeAccepted = true
        if let acceptable = acceptableContentTypes, hasBody {
            contentTypeHeader = head.value(forHTTPHeaderField: "Content-Type")
            contentTypeAccepted = Self.accepts(contentTypeHeader: contentTypeHeader, in: acceptable)
        }
        let statusAccepted = acceptableStatusCodes?.contains(head.statusCode) ?? true
        guard !statusAccepted || !contentTypeAccepted else { return nil }
        let context = CourierError.Context(response: head.response, data: data)
        var contentTypeError: CourierError?
        if !contentTypeAccepted, let acceptable = acceptableContentTypes {
            let mime = contentTypeHeader.flatMap(ContentType.mimeType(of:))
            contentTypeError = .unacceptableContentType(mime, acceptable: acceptable, context: context)
        }
        if !statusAccepted {
            return .unacceptableStatusCode(head.statusCode, context: context, underlyingError: contentTypeError)
        }
        return contentTypeError
    }

    /// ``validationError(head:data:)`` for Foundation's form of a response.
    public func validationError(response: HTTPURLResponse?, data: Data?) -> CourierError? {
        validationError(head: response.map(ResponseHead.init), data: data)
    }

    private static func lowercased(_ types: Set<String>) -> Set<String> {
        let hasUpperCase = types.contains { $0.utf8.contains { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) } }
        return hasUpperCase ? Set(types.map { $0.lowercased() }) : types
    }

    /// Whether the MIME type of a `Content-Type` header value is among `acceptable`; a missing one never is.
    private static func accepts(contentTypeHeader: String?, in acceptable: Set<String>) -> Bool {
        guard let header = contentTypeHeader else { return false }
        // The usual header is exactly one of the acceptable types, which needs no parsing or lowercasing.
        if acceptable.contains(header) { return true }
        guard let mime = ContentType.mimeType(of: header) else { return false }
        return lowercased(acceptable).contains(mime)
    }
}

extension IndexSet {
    /// `200..<300`: the status codes AFNetworking accepts by default.
    public static let successfulStatusCodes = IndexSet(integersIn: 200..<300)
}

extension HTTPURLResponse {
    /// The parsed `Content-Type` header, if any.
    public var contentType: ContentType? {
        value(forHTTPHeaderField: "Content-Type").flatMap(ContentType.init)
    }
}

extension Data {
    /// Whether the body counts as empty for serializers: no bytes, or a single space (what Rails' `head :ok` sends).
    var isEffectivelyEmpty: Bool {
        isEmpty || (count == 1 && first == UInt8(ascii: " "))
    }
}

extension ResponseValidating {
    /// Validates, then parses the body, following `AFJSONResponseSerializer`'s order of checks:
    ///
    /// 1. An unacceptable content type (alone or under a status error) is thrown without parsing.
    /// 2. An empty body (or a single space) gives `nil`, unless validation failed.
    /// 3. A body that fails to parse is a ``CourierError/responseSerializationFailed(reason:context:underlyingError:)``
    ///    (code -1016) with the parser's error underneath; when the status was also unacceptable, the status error
    ///    is thrown with the parse error underneath.
    /// 4. A body that parses under an unacceptable status is thrown as the status error carrying the parsed object,
    ///    so the server's error document can be read (AF #3551).
    public func validateAndParse<Object: Sendable>(
        head: ResponseHead?,
        data: Data?,
        failureReason: String,
        parse: (Data) throws -> Object
    ) throws -> Object? {
        let validationError = validationError(head: head, data: data)
        if let validationError, validationError.contains(code: -1016) { throw validationError }
        guard let data, !data.isEffectivelyEmpty else {
            if let validationError { throw validationError }
            return nil
        }
        let object: Object
        do {
            object = try parse(data)
        } catch {
            let context = CourierError.Context(response: head?.response, data: data)
            let parseError = CourierError.responseSerializationFailed(
                reason: failureReason, context: context, underlyingError: error)
            if case .unacceptableStatusCode(let code, let context, _) = validationError {
                throw CourierError.unacceptableStatusCode(code, context: context, underlyingError: parseError)
            }
            throw parseError
        }
        if let validationError { throw validationError.withContext { $0.serializedObject = object } }
        return object
    }

    /// ``validateAndParse(head:data:failureReason:parse:)`` for Foundation's form of a response.
    public func validateAndParse<Object: Sendable>(
        response: HTTPURLResponse?, data: Data?, failureReason: String, parse: (Data) throws -> Object
    ) throws -> Object? {
        try validateAndParse(
            head: response.map(ResponseHead.init), data: data, failureReason: failureReason, parse: parse)
    }
}

/// The reason given when a body is not in the format its serializer reads.
let unreadableDataReason = "The data couldn’t be read because it isn’t in the correct format."

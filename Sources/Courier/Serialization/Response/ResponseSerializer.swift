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

    /// Validates the response and serializes its body.
    ///
    /// - Throws: ``CourierError`` with the response and data attached when validation or parsing fails.
    func serialize(response: HTTPURLResponse?, data: Data?) throws -> SerializedObject
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
    /// Throws the error ``validationError(response:data:)`` finds, if any.
    public func validate(response: HTTPURLResponse?, data: Data?) throws {
        if let error = validationError(response: response, data: data) { throw error }
    }

    /// The validation error for a response, or `nil` when it is valid or its only fault carries no error.
    ///
    /// AFNetworking's rules:
    /// 1. A MIME type outside ``acceptableContentTypes`` is invalid unless the MIME type is absent and the body is
    ///    empty; but the error (code -1016) is only raised when the body is non-empty, so an empty body with an
    ///    unacceptable type is not an error.
    /// 2. A status outside ``acceptableStatusCodes`` is an error (code -1011); a content-type error found in step 1
    ///    becomes its underlying error.
    public func validationError(response: HTTPURLResponse?, data: Data?) -> CourierError? {
        guard let response else { return nil }
        let context = CourierError.Context(response: response, data: data)
        let hasBody = !(data?.isEmpty ?? true)
        var contentTypeError: CourierError?
        if let acceptable = acceptableContentTypes, hasBody {
            let header = response.value(forHTTPHeaderField: "Content-Type")
            if !Self.accepts(contentTypeHeader: header, in: acceptable) {
                let mime = header.flatMap(ContentType.mimeType(of:))
                contentTypeError = .unacceptableContentType(mime, acceptable: acceptable, context: context)
            }
        }
        if let acceptable = acceptableStatusCodes, !acceptable.contains(response.statusCode) {
            return .unacceptableStatusCode(response.statusCode, context: context, underlyingError: contentTypeError)
        }
        return contentTypeError
    }

    /// Whether a response with this status and `Content-Type` header passes ``validationError(response:data:)``,
    /// without making an `HTTPURLResponse` to ask.
    func accepts(statusCode: Int, contentTypeHeader: String?, hasBody: Bool) -> Bool {
        if let acceptable = acceptableStatusCodes, !acceptable.contains(statusCode) { return false }
        guard let acceptable = acceptableContentTypes, hasBody else { return true }
        return Self.accepts(contentTypeHeader: contentTypeHeader, in: acceptable)
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

/// A validating serializer whose parsing reads nothing of the response but the body once validation has passed:
/// given a response that ``ResponseValidating/accepts(statusCode:contentTypeHeader:hasBody:)``, serializing with a
/// `nil` response gives the same value as with the response. Sessions use this to skip making Foundation's
/// `HTTPURLResponse` for a valid response; on any error they serialize again with the response, for its context.
protocol BodyOnlySerializer: ResponseValidating {}

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
        response: HTTPURLResponse?,
        data: Data?,
        failureReason: String,
        parse: (Data) throws -> Object
    ) throws -> Object? {
        let validationError = validationError(response: response, data: data)
        if let validationError, validationError.contains(code: -1016) { throw validationError }
        guard let data, !data.isEffectivelyEmpty else {
            if let validationError { throw validationError }
            return nil
        }
        let object: Object
        do {
            object = try parse(data)
        } catch {
            let context = CourierError.Context(response: response, data: data)
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
}

/// The reason given when a body is not in the format its serializer reads.
let unreadableDataReason = "The data couldn’t be read because it isn’t in the correct format."

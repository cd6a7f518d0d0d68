import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every error Courier throws.
///
/// Each case carries what is known about the failure: the failing request, the response and its body are in
/// ``context`` where the case has one, and are read most easily through ``request``, ``response`` and
/// ``responseData``. ``errorCode`` keeps AFNetworking's (that is, `NSURLErrorDomain`'s) numbers so code ported from
/// AFNetworking can keep testing them, and the descriptions keep AFNetworking's wording.
public enum CourierError: Error, Sendable {
    /// A URL string could not be turned into a usable URL. Code -1000.
    case invalidURL(String)

    /// Parameters could not be written in the serializer's format (a set in JSON, a null in a property list,
    /// a custom query-string closure that failed…). Code -1016.
    case parameterEncodingFailed(reason: String, underlyingError: (any Error)?)

    /// The response's MIME type (the `Content-Type` without parameters, `nil` when absent) is not one of the
    /// serializer's acceptable content types. Code -1016.
    case unacceptableContentType(String?, acceptable: Set<String>, context: Context)

    /// The response's status code is not one of the serializer's acceptable status codes. Code -1011.
    ///
    /// When the body could still be parsed, the parsed object is in ``serializedObject`` (the server's error body,
    /// AF #3551). When the content type was also unacceptable, or the body failed to parse, that error is the
    /// ``underlyingError``.
    case unacceptableStatusCode(Int, context: Context, underlyingError: (any Error)?)

    /// The body could not be parsed (malformed JSON, XML or property list, undecodable model, unknown image…).
    /// Code -1016; the parser's own error is the ``underlyingError``.
    case responseSerializationFailed(reason: String, context: Context, underlyingError: (any Error)?)

    /// The task was cancelled. Code -999.
    case cancelled(context: Context)

    /// The server's certificate chain did not pass the security policy. Code -1202.
    case serverTrustEvaluationFailed(host: String, reason: String)

    /// The request or resource timeout passed without progress. Code -1001.
    case timedOut(context: Context)

    /// More than the allowed number of redirects, or a redirect cycle. Code -1007.
    case tooManyRedirects(context: Context)

    /// No connection could be made to the host. Code -1004.
    case cannotConnect(host: String, underlyingError: (any Error)?, context: Context)

    /// The connection closed before the response was complete. Code -1005.
    case connectionLost(underlyingError: (any Error)?, context: Context)

    /// The server sent something that is not HTTP. Code -1011.
    case badServerResponse(reason: String, underlyingError: (any Error)?, context: Context)

    /// A file could not be read, written or moved (request bodies, downloads). Code -3000.
    case fileOperationFailed(reason: String, underlyingError: (any Error)?, context: Context)

    /// The transport failed for another reason; the transport's error is underneath. Code -1.
    case requestFailed(underlyingError: (any Error)?, context: Context)

    /// A multipart form could not be built or sent: a part's URL is not a file URL (`Expected URL to be a file
    /// URL`), its file is missing or unreadable (`File URL not reachable.`), the method cannot carry a form, or a
    /// streamed part's length differs from the one declared. Code -1000, as AFNetworking's.
    case multipartEncodingFailed(reason: String, fileURL: URL?, underlyingError: (any Error)?)

    /// The URL's scheme is one Courier does not send to: not `http` or `https`, or a Unix-socket URL
    /// (`http+unix:`, `https+unix:`, `unix:`) that the session was not configured to allow
    /// (``SessionConfiguration/allowsUnixSocketURLs``), or a redirect's target that is not `http` or `https`.
    /// Code -1002, as `NSURLErrorUnsupportedURL`.
    case unsupportedURL(URL, reason: String, context: Context)

    /// A redirect from `https` to plain `http` was refused: following it would send the request, and any secret it
    /// carries, unencrypted and outside the session's pinning policy. Allow it with
    /// ``SessionConfiguration/allowsInsecureRedirects``. Code -1022, as
    /// `NSURLErrorAppTransportSecurityRequiresSecureConnection`.
    case insecureRedirect(from: URL, to: URL, context: Context)

    /// The proxy the request went through (``SessionConfiguration/proxy``) failed it: it asked for credentials or
    /// refused the ones given (`authentication` is then `true`; an answer of 407), or it could not open the tunnel
    /// to the origin (`CONNECT` or SOCKS refused). `proxy` names it as `host:port`, never with its password. Code
    /// 307 (`kCFErrorHTTPBadProxyCredentials`) for authentication, else 306 (`kCFErrorHTTPProxyConnectionFailure`).
    case proxyFailed(
        proxy: String, authentication: Bool, reason: String, underlyingError: (any Error)?, context: Context)

    /// The response body is larger than the session keeps in memory
    /// (``SessionConfiguration/maximumInMemoryBodySize``, `limit` bytes): its declared length or the bytes received
    /// passed it, so the task stopped reading and the connection was closed. Code -1103, as
    /// `NSURLErrorDataLengthExceedsMaximum`. Download the body to a file, or stream it, to receive more.
    case responseTooLarge(limit: Int, context: Context)

    /// What is known about the exchange that failed.
    public struct Context: Sendable {
        /// The request that failed, once a session has attached it.
        public var request: URLRequest?
        /// The HTTP response, when one arrived.
        public var response: HTTPURLResponse?
        /// The response body, when one arrived.
        public var data: Data?
        /// The body parsed in spite of the failure (e.g. a JSON error document from a 422), when it could be.
        public var serializedObject: (any Sendable)?

        /// Creates a context.
        public init(
            request: URLRequest? = nil,
            response: HTTPURLResponse? = nil,
            data: Data? = nil,
            serializedObject: (any Sendable)? = nil
        ) {
            self.request = request
            self.response = response
            self.data = data
            self.serializedObject = serializedObject
        }
    }
}

extension CourierError {
    /// AFNetworking's code for this error (`NSURLErrorDomain` numbers).
    public var errorCode: Int {
        switch self {
        case .invalidURL: return -1000
        case .parameterEncodingFailed, .unacceptableContentType, .responseSerializationFailed: return -1016
        case .unacceptableStatusCode: return -1011
        case .cancelled: return -999
        case .serverTrustEvaluationFailed: return -1202
        case .timedOut: return -1001
        case .tooManyRedirects: return -1007
        case .cannotConnect: return -1004
        case .connectionLost: return -1005
        case .badServerResponse: return -1011
        case .fileOperationFailed: return -3000
        case .requestFailed: return -1
        case .multipartEncodingFailed: return -1000
        case .unsupportedURL: return -1002
        case .insecureRedirect: return -1022
        case .proxyFailed(_, let authentication, _, _, _): return authentication ? 307 : 306
        case .responseTooLarge: return -1103
        }
    }

    /// The exchange this error belongs to, for the cases that have one.
    public var context: Context? {
        switch self {
        case .unacceptableContentType(_, _, let context), .unacceptableStatusCode(_, let context, _),
            .responseSerializationFailed(_, let context, _), .cancelled(let context), .timedOut(let context),
            .tooManyRedirects(let context), .cannotConnect(_, _, let context), .connectionLost(_, let context),
            .badServerResponse(_, _, let context), .fileOperationFailed(_, _, let context),
            .requestFailed(_, let context), .unsupportedURL(_, _, let context), .insecureRedirect(_, _, let context),
            .proxyFailed(_, _, _, _, let context), .responseTooLarge(_, let context):
            return context
        case .invalidURL, .parameterEncodingFailed, .serverTrustEvaluationFailed, .multipartEncodingFailed:
            return nil
        }
    }

    /// The failing request, when known.
    public var request: URLRequest? { context?.request }

    /// The HTTP response, when one arrived.
    public var response: HTTPURLResponse? { context?.response }

    /// The response body, when one arrived: read the server's error document here.
    public var responseData: Data? { context?.data }

    /// The body parsed in spite of the failure, e.g. the ``JSON`` of an error response.
    public var serializedObject: (any Sendable)? { context?.serializedObject }

    /// The error underneath this one: the parser's error, or the content-type error under a status error.
    public var underlyingError: (any Error)? {
        switch self {
        case .parameterEncodingFailed(_, let error), .unacceptableStatusCode(_, _, let error),
            .responseSerializationFailed(_, _, let error), .cannotConnect(_, let error, _),
            .connectionLost(let error, _),
            .badServerResponse(_, let error, _), .fileOperationFailed(_, let error, _), .requestFailed(let error, _),
            .multipartEncodingFailed(_, _, let error), .proxyFailed(_, _, _, let error, _):
            return error
        case .invalidURL, .unacceptableContentType, .cancelled, .serverTrustEvaluationFailed, .timedOut,
            .tooManyRedirects, .unsupportedURL, .insecureRedirect, .responseTooLarge:
            return nil
        }
    }

    /// Whether this error, or one underneath it, has the given ``errorCode``.
    public func contains(code: Int) -> Bool {
        if errorCode == code { return true }
        return (underlyingError as? CourierError)?.contains(code: code) ?? false
    }

    /// A copy of the error with the exchange's context changed, for the cases that have one (sessions use it to
    /// attach the failing request).
    public func withContext(_ update: (inout Context) -> Void) -> CourierError {
        switch self {
        case .unacceptableContentType(let mime, let acceptable, var context):
            update(&context)
            return .unacceptableContentType(mime, acceptable: acceptable, context: context)
        case .unacceptableStatusCode(let code, var context, let underlying):
            update(&context)
            return .unacceptableStatusCode(code, context: context, underlyingError: underlying)
        case .responseSerializationFailed(let reason, var context, let underlying):
            update(&context)
            return .responseSerializationFailed(reason: reason, context: context, underlyingError: underlying)
        case .cancelled(var context):
            update(&context)
            return .cancelled(context: context)
        case .timedOut(var context):
            update(&context)
            return .timedOut(context: context)
        case .tooManyRedirects(var context):
            update(&context)
            return .tooManyRedirects(context: context)
        case .cannotConnect(let host, let underlying, var context):
            update(&context)
            return .cannotConnect(host: host, underlyingError: underlying, context: context)
        case .connectionLost(let underlying, var context):
            update(&context)
            return .connectionLost(underlyingError: underlying, context: context)
        case .badServerResponse(let reason, let underlying, var context):
            update(&context)
            return .badServerResponse(reason: reason, underlyingError: underlying, context: context)
        case .fileOperationFailed(let reason, let underlying, var context):
            update(&context)
            return .fileOperationFailed(reason: reason, underlyingError: underlying, context: context)
        case .requestFailed(let underlying, var context):
            update(&context)
            return .requestFailed(underlyingError: underlying, context: context)
        case .unsupportedURL(let url, let reason, var context):
            update(&context)
            return .unsupportedURL(url, reason: reason, context: context)
        case .insecureRedirect(let from, let to, var context):
            update(&context)
            return .insecureRedirect(from: from, to: to, context: context)
        case .proxyFailed(let proxy, let authentication, let reason, let underlying, var context):
            update(&context)
            return .proxyFailed(
                proxy: proxy, authentication: authentication, reason: reason, underlyingError: underlying,
                context: context)
        case .responseTooLarge(let limit, var context):
            update(&context)
            return .responseTooLarge(limit: limit, context: context)
        case .invalidURL, .parameterEncodingFailed, .serverTrustEvaluationFailed, .multipartEncodingFailed:
            return self
        }
    }
}

extension CourierError: LocalizedError {
    /// The description in AFNetworking's wording, e.g. `Request failed: not found (404)`.
    public var errorDescription: String? {
        switch self {
        case .invalidURL(let string):
            return "bad URL: “\(string)” is not a valid URL."
        case .parameterEncodingFailed(let reason, _):
            return reason
        case .unacceptableContentType(let mime, _, _):
            return "Request failed: unacceptable content-type: \(mime ?? "(null)")"
        case .unacceptableStatusCode(let code, _, _):
            return "Request failed: \(HTTPStatusPhrase.localizedString(forStatusCode: code)) (\(code))"
        case .responseSerializationFailed(let reason, _, _):
            return reason
        case .cancelled:
            return "cancelled"
        case .serverTrustEvaluationFailed(let host, _):
            return "The certificate for this server is invalid. You might be connecting to a server that is "
                + "pretending to be “\(host)” which could put your confidential information at risk."
        case .timedOut:
            return "The request timed out."
        case .tooManyRedirects:
            return "too many HTTP redirects"
        case .cannotConnect:
            return "Could not connect to the server."
        case .connectionLost:
            return "The network connection was lost."
        case .badServerResponse(let reason, _, _):
            return "bad server response: \(reason)"
        case .fileOperationFailed(let reason, _, _):
            return reason
        case .requestFailed(let error, _):
            return "The request failed: \(error.map { String(describing: $0) } ?? "unknown error")"
        case .multipartEncodingFailed(let reason, _, _):
            return reason
        case .unsupportedURL(let url, let reason, _):
            return "unsupported URL: \(url.absoluteString): \(reason)"
        case .insecureRedirect(let from, let to, _):
            return "refused a redirect from https to plain http (\(from.absoluteString) → \(to.absoluteString)): "
                + "the request would leave TLS and the security policy"
        case .proxyFailed(let proxy, let authentication, let reason, _, _):
            return authentication
                ? "the proxy \(proxy) refused the request: proxy authentication required (\(reason))"
                : "the proxy \(proxy) failed the request: \(reason)"
        case .responseTooLarge(let limit, _):
            return "the response body is larger than \(limit) bytes, the most the session keeps in memory "
                + "(maximumInMemoryBodySize); download it to a file or stream it instead"
        }
    }

    /// The detailed reason, where there is more to say than the description.
    public var failureReason: String? {
        switch self {
        case .serverTrustEvaluationFailed(_, let reason): return reason
        case .parameterEncodingFailed(_, let error?), .responseSerializationFailed(_, _, let error?),
            .cannotConnect(_, let error?, _), .connectionLost(let error?, _), .badServerResponse(_, let error?, _),
            .fileOperationFailed(_, let error?, _), .multipartEncodingFailed(_, _, let error?):
            return String(describing: error)
        default: return nil
        }
    }
}

extension CourierError: CustomNSError {
    /// The error domain Courier's errors bridge to `NSError` with (`error as NSError`); see
    /// ``afNetworkingError`` for AFNetworking's domains.
    public static var errorDomain: String { "com.courier.error" }

    /// AFNetworking's `AFURLResponseSerializationErrorDomain`: validation and parsing failures (-1011, -1016).
    public static let responseSerializationErrorDomain = "com.alamofire.error.serialization.response"
    /// AFNetworking's `AFURLRequestSerializationErrorDomain`: parameters or a multipart body that cannot be encoded.
    public static let requestSerializationErrorDomain = "com.alamofire.error.serialization.request"
    /// AFNetworking's `AFNetworkingOperationFailingURLResponseErrorKey`: the `HTTPURLResponse` of the failed request.
    public static let failingURLResponseErrorKey = "com.alamofire.serialization.response.error.response"
    /// AFNetworking's `AFNetworkingOperationFailingURLResponseDataErrorKey`: the body of the failed response.
    public static let failingURLResponseDataErrorKey = "com.alamofire.serialization.response.error.data"
    /// AFNetworking's `AFNetworkingOperationFailingURLRequestErrorKey`: the request that could not be serialized.
    public static let failingURLRequestErrorKey = "com.alamofire.serialization.request.error.response"

    /// `NSError` user info: the description, the failing URL and the underlying error, and under AFNetworking's keys
    /// the failing response and its body (and, for request serialization, the request).
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [:]
        info[NSLocalizedDescriptionKey] = errorDescription
        if let reason = failureReason { info[NSLocalizedFailureReasonErrorKey] = reason }
        if let url = response?.url ?? request?.url { info[NSURLErrorFailingURLErrorKey] = url }
        if let underlying = underlyingError { info[NSUnderlyingErrorKey] = underlying as NSError }
        if let response { info[Self.failingURLResponseErrorKey] = response }
        if let responseData { info[Self.failingURLResponseDataErrorKey] = responseData }
        if afNetworkingDomain == Self.requestSerializationErrorDomain, let request {
            info[Self.failingURLRequestErrorKey] = request
        }
        return info
    }

    /// The error as AFNetworking would have reported it: the same code and user info, in AFNetworking's domain for
    /// its kind (``responseSerializationErrorDomain`` for validation and parsing, ``requestSerializationErrorDomain``
    /// for encoding, `NSURLErrorDomain` for the rest), for code that checks `error.domain` as it did with
    /// AFNetworking. `error as NSError` keeps ``errorDomain``: Swift bridges every case of a type to one domain.
    ///
    /// A body that Foundation's parser refused (``FoundationJSONResponseSerializer``,
    /// ``FoundationPropertyListResponseSerializer``, ``PropertyListResponseSerializer``) is reported as AFNetworking's
    /// serializers report it: the parser's own error (`NSCocoaErrorDomain` 3840), and when the status was unacceptable
    /// too, that status error under its `NSUnderlyingErrorKey` (AFNetworking's `AFErrorWithUnderlyingError`).
    public var afNetworkingError: NSError {
        switch self {
        case .responseSerializationFailed(_, _, let underlying?) where Self.isFoundationParserError(underlying):
            return underlying as NSError
        case .unacceptableStatusCode(let code, let context, let underlying as CourierError):
            guard case .responseSerializationFailed(_, _, let parserError?) = underlying,
                Self.isFoundationParserError(parserError)
            else { break }
            let parsing = parserError as NSError
            var info = parsing.userInfo
            if info[NSUnderlyingErrorKey] == nil {
                info[NSUnderlyingErrorKey] =
                    CourierError.unacceptableStatusCode(code, context: context, underlyingError: nil).afNetworkingError
            }
            return NSError(domain: parsing.domain, code: parsing.code, userInfo: info)
        default:
            break
        }
        return NSError(domain: afNetworkingDomain, code: errorCode, userInfo: errorUserInfo)
    }

    /// Whether `error` is `JSONSerialization`'s or `PropertyListSerialization`'s refusal of a body.
    private static func isFoundationParserError(_ error: any Error) -> Bool {
        (error as NSError).domain == NSCocoaErrorDomain
    }

    private var afNetworkingDomain: String {
        switch self {
        case .unacceptableStatusCode, .unacceptableContentType, .responseSerializationFailed:
            return Self.responseSerializationErrorDomain
        case .parameterEncodingFailed, .multipartEncodingFailed:
            return Self.requestSerializationErrorDomain
        default:
            return NSURLErrorDomain
        }
    }
}

extension CourierError: CustomStringConvertible {
    /// The description with the error code, e.g. `CourierError -1011: Request failed: not found (404)`.
    public var description: String {
        "CourierError \(errorCode): \(errorDescription ?? "")"
    }
}

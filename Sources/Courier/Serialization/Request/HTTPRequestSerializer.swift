import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Encodes parameters as a form URL-encoded query string (`AFHTTPRequestSerializer`).
///
/// For the methods in ``methodsEncodingParametersInURI`` (GET, HEAD, DELETE) the query goes into the URL: after
/// `?`, or after `&` when the URL already has a query; no parameters leave the URL unchanged. For every other method
/// the query becomes the body, with `Content-Type: application/x-www-form-urlencoded` unless the request already has a
/// content type; `nil` parameters give an empty body, which is a valid form.
///
/// The request properties (``timeoutInterval``, ``cachePolicy``, …) are `nil` until set and only set properties are
/// applied, so requests otherwise keep `URLRequest`'s own defaults, as in AFNetworking.
public struct HTTPRequestSerializer: RequestSerializer {
    /// Headers added to every request that has no value for the field; starts with `Accept-Language` and
    /// `User-Agent` (see ``DefaultHeaders``).
    public var headers: HTTPHeaderFields {
        didSet {
            defaultFields = Self.fields(of: headers)
            sortedDefaultFields = Self.sorted(defaultFields)
        }
    }
    /// ``headers`` as a fresh request's fields, kept up to date so that a request does not build them again: the
    /// first of several fields with one name wins.
    private var defaultFields: [String: String]
    /// ``defaultFields`` in the order a request sends them.
    private var sortedDefaultFields: HTTPHeaderFields

    /// Methods whose parameters go into the URL's query, compared upper-cased. Default `GET`, `HEAD`, `DELETE`.
    public var methodsEncodingParametersInURI: Set<String> = ["GET", "HEAD", "DELETE"]

    /// How array elements are named in the query; default ``QueryString/ArrayEncoding/brackets``.
    public var arrayEncoding: QueryString.ArrayEncoding = .brackets

    /// How Booleans are written in the query; default ``QueryString/BoolEncoding/numeric``.
    public var boolEncoding: QueryString.BoolEncoding = .numeric

    /// A custom query-string builder replacing ``QueryString``; an error it throws aborts the request and is
    /// rethrown unchanged.
    public var queryStringSerialization: (@Sendable (URLRequest, Parameter) throws -> String)?

    /// The timeout applied to new requests, when set.
    public var timeoutInterval: TimeInterval?
    /// The cache policy applied to new requests, when set.
    public var cachePolicy: URLRequest.CachePolicy?
    /// Whether new requests handle cookies, when set.
    public var httpShouldHandleCookies: Bool?
    /// Whether new requests may use a cellular network, when set.
    public var allowsCellularAccess: Bool?
    /// The network service type of new requests, when set.
    public var networkServiceType: URLRequest.NetworkServiceType?
    /// AFNetworking's `HTTPShouldUsePipelining`, accepted so code that sets it keeps compiling, and not applied: no
    /// transport pipelines requests (``NIOTransport`` sends the next request on a connection only after the previous
    /// response, on its own connections and AsyncHTTPClient's alike; Foundation has deprecated the `URLRequest`
    /// property, and HTTP/2 multiplexes instead).
    public var httpShouldUsePipelining: Bool?
    /// The encoding of form bodies (AFNetworking's `stringEncoding`); default UTF-8. With another (ISO-8859-1, say),
    /// each character of a field or value is percent-escaped as its bytes in that encoding (`é` as `%E9`, as a
    /// browser sends a form of a page in that encoding) and `Content-Type` says which
    /// (`application/x-www-form-urlencoded; charset=iso-8859-1`); a character the encoding cannot write fails the
    /// request with ``CourierError/parameterEncodingFailed(reason:underlyingError:)``. A query in the URL stays
    /// UTF-8, as RFC 3986 asks.
    public var stringEncoding: String.Encoding = .utf8

    /// Creates a serializer with the default headers.
    public init() {
        headers = [
            "Accept-Language": DefaultHeaders.acceptLanguage(for: DefaultHeaders.preferredLanguages()),
            "User-Agent": DefaultHeaders.userAgent,
        ]
        defaultFields = Self.fields(of: headers)
        sortedDefaultFields = Self.sorted(defaultFields)
    }

    /// Sets a default header; `nil` removes it.
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {
        headers[field] = value
    }

    /// The default header for a field (case-insensitive).
    public func value(forHTTPHeaderField field: String) -> String? {
        headers[field]
    }

    /// Sets `Authorization: Basic <base64 of "username:password" in UTF-8>`.
    public mutating func setAuthorization(username: String, password: String) {
        let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
        headers["Authorization"] = "Basic \(credentials)"
    }

    /// Removes the `Authorization` header.
    public mutating func clearAuthorization() {
        headers["Authorization"] = nil
    }

    /// Whether `method`'s parameters go into the URL.
    public func encodesParametersInURI(_ method: String?) -> Bool {
        methodsEncodingParametersInURI.contains((method ?? "GET").uppercased())
    }

    /// Builds a request with ``makeRequest(method:urlString:)`` and serializes `parameters` into it.
    public func request(method: String, urlString: String, parameters: Parameter?) throws -> URLRequest {
        var request = try makeRequest(method: method, urlString: urlString)
        try serialize(into: &request, parameters: parameters)
        return request
    }

    /// Itself.
    public var baseSerializer: HTTPRequestSerializer? { self }

    /// ``request(method:urlString:parameters:)`` for a parsed URL.
    public func request(method: String, url: URL, parameters: Parameter?) throws -> URLRequest {
        var request = try makeRequest(method: method, url: url)
        try serialize(into: &request, parameters: parameters)
        return request
    }

    /// Adds the default headers the request lacks, then puts the query in the URL or the body (see the type).
    public func serialize(_ request: URLRequest, parameters: Parameter?) throws -> URLRequest {
        var request = request
        try serialize(into: &request, parameters: parameters)
        return request
    }

    /// ``serialize(_:parameters:)`` in place. A request built for the call and held by nobody else is then changed
    /// without Foundation copying it: a `URLRequest` copies its whole `NSURLRequest` on the first change made while
    /// another value still shares it.
    func serialize(into request: inout URLRequest, parameters: Parameter?) throws {
        applyHeaders(to: &request)
        if encodesParametersInURI(request.httpMethod) {
            let query = try parameters.map { try queryString(for: request, parameters: $0) }
            if let query, !query.isEmpty, let url = request.url {
                request.url = try Self.appending(query: query, to: url)
            }
            return
        }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            var type = "application/x-www-form-urlencoded"
            if stringEncoding != .utf8, let charset = stringEncoding.ianaCharsetName { type += "; charset=\(charset)" }
            request.setValue(type, forHTTPHeaderField: "Content-Type")
        }
        request.httpBody = try formBody(for: request, parameters: parameters)
    }

    /// The body of a form: the query string of `parameters`, escaped in ``stringEncoding``.
    private func formBody(for request: URLRequest, parameters: Parameter?) throws -> Data {
        guard let parameters else { return Data() }
        // A custom builder's query, and UTF-8's, are the usual one; only the default builder escapes in another
        // encoding.
        let query =
            stringEncoding == .utf8 || queryStringSerialization != nil
            ? try queryString(for: request, parameters: parameters)
            : try QueryString.encode(
                parameters, arrayEncoding: arrayEncoding, boolEncoding: boolEncoding, stringEncoding: stringEncoding)
        if stringEncoding == .utf8 { return Data(query.utf8) }
        guard let body = query.data(using: stringEncoding, allowLossyConversion: false) else {
            throw QueryString.unwritable(query, in: stringEncoding)
        }
        return body
    }

    /// A request for `method` and `urlString` with the serializer's request properties, but no headers or
    /// parameters yet.
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` unless the string parses as an absolute URL with a scheme (and, for
    ///   http and https, a host).
    public func makeRequest(method: String, urlString: String) throws -> URLRequest {
        guard let url = URL(string: urlString) else { throw CourierError.invalidURL(urlString) }
        return try makeRequest(method: method, url: url, urlString: urlString)
    }

    /// ``makeRequest(method:urlString:)`` for a parsed URL.
    public func makeRequest(method: String, url: URL) throws -> URLRequest {
        try makeRequest(method: method, url: url, urlString: url.absoluteString)
    }

    private func makeRequest(method: String, url: URL, urlString: @autoclosure () -> String) throws -> URLRequest {
        try Self.validate(url, urlString: urlString())
        return emptyRequest(method: method, url: url)
    }

    /// The `URLRequest` that ``request(method:url:parameters:)`` would have made for the same call as `plain`,
    /// made from `plain` without encoding the parameters again.
    func request(from plain: PlainRequest) -> URLRequest {
        var request = emptyRequest(method: plain.method, url: plain.url)
        request.allHTTPHeaderFields = plain.headerFields
        return request
    }

    private func emptyRequest(method: String, url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        if method != "GET" { request.httpMethod = method }  // GET is a new request's method already
        if let timeoutInterval { request.timeoutInterval = timeoutInterval }
        if let cachePolicy { request.cachePolicy = cachePolicy }
        if let httpShouldHandleCookies { request.httpShouldHandleCookies = httpShouldHandleCookies }
        if let allowsCellularAccess { request.allowsCellularAccess = allowsCellularAccess }
        if let networkServiceType { request.networkServiceType = networkServiceType }
        return request
    }

    /// Throws unless `url` has a scheme, and, for http and https, a host; and a port from 1 to 65535 when it names
    /// one (NIO traps on a larger one, and a host name wraps it).
    private static func validate(_ url: URL, urlString: @autoclosure () -> String) throws {
        // An http or https URL without a host fails the authority's check.
        guard URLCheck.scheme(of: url.absoluteString) != nil else { throw CourierError.invalidURL(urlString()) }
        do {
            try URLCheck.validateAuthority(of: url)
        } catch {
            throw CourierError.invalidURL(urlString())
        }
    }

    /// What ``request(method:url:parameters:)`` gives, without making the `URLRequest`; `nil` when the request
    /// would have a body (its method's parameters do not go into the URL) or its query comes from
    /// ``queryStringSerialization``, which is handed a `URLRequest`.
    ///
    /// - Throws: what ``request(method:url:parameters:)`` throws for the same arguments.
    func plainRequest(method: String, url: URL, parameters: Parameter?) throws -> PlainRequest? {
        guard encodesParametersInURI(method), parameters == nil || queryStringSerialization == nil else { return nil }
        try Self.validate(url, urlString: url.absoluteString)
        var url = url
        if let parameters {
            let query = encodedQuery(parameters)
            if !query.isEmpty { url = try Self.appending(query: query, to: url) }
        }
        return PlainRequest(
            method: method, url: url, headerFields: defaultFields, sortedHeaders: sortedDefaultFields,
            handlesCookies: httpShouldHandleCookies ?? true)
    }

    /// Header fields from a `URLRequest`'s dictionary, sorted by name: Foundation hands them out in no order, and a
    /// request's fields go out in one.
    static func sorted(_ fields: [String: String]) -> HTTPHeaderFields {
        HTTPHeaderFields(
            fields.sorted(by: { $0.key < $1.key }).map { HTTPHeaderFields.Field(name: $0.key, value: $0.value) })
    }

    private static func fields(of headers: HTTPHeaderFields) -> [String: String] {
        var fields: [String: String] = [:]
        var seen = Set<FieldName>()
        for field in headers where seen.insert(FieldName(field.name)).inserted {
            fields[field.name] = field.value
        }
        return fields
    }

    /// A copy of `request` with each default header it has no value for.
    public func applyingHeaders(to request: URLRequest) -> URLRequest {
        var request = request
        applyHeaders(to: &request)
        return request
    }

    /// ``applyingHeaders(to:)`` in place.
    func applyHeaders(to request: inout URLRequest) {
        if request.allHTTPHeaderFields?.isEmpty ?? true {
            // A fresh request: one assignment, where `setValue` would copy Foundation's request once per header.
            request.allHTTPHeaderFields = defaultFields
            return
        }
        for field in headers where request.value(forHTTPHeaderField: field.name) == nil {
            request.setValue(field.value, forHTTPHeaderField: field.name)
        }
    }

    /// The query string for `parameters`: the custom closure's, or ``QueryString``'s with this serializer's options.
    public func queryString(for request: URLRequest, parameters: Parameter) throws -> String {
        if let queryStringSerialization {
            return try queryStringSerialization(request, parameters)
        }
        return encodedQuery(parameters)
    }

    /// ``QueryString``'s query for `parameters` with this serializer's options: the query unless a custom
    /// ``queryStringSerialization`` replaces it.
    private func encodedQuery(_ parameters: Parameter) -> String {
        QueryString.encode(parameters, arrayEncoding: arrayEncoding, boolEncoding: boolEncoding)
    }

    /// `url` with `query` after its existing query (joined by `&`) or after a new `?`, before any fragment.
    static func appending(query: String, to url: URL) throws -> URL {
        let string = url.absoluteString
        let fragmentStart = string.firstIndex(of: "#") ?? string.endIndex
        let separator = url.query == nil ? "?" : "&"
        let joined = string[..<fragmentStart] + separator + query + string[fragmentStart...]
        guard let result = URL(string: String(joined)) else { throw CourierError.invalidURL(String(joined)) }
        return result
    }
}

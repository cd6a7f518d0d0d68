import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP client with a base URL (`AFHTTPSessionManager`).
///
/// ```swift
/// let client = HTTPSessionManager(baseURL: URL(string: "https://api.example.com/v1"))
/// let user = try await client.get("users/1", as: User.self).value
/// ```
///
/// Relative URL strings resolve against ``baseURL`` per RFC 3986: `foo` → `…/v1/foo`, `/foo` → `…/foo`,
/// `?a=b` → `…/v1/?a=b`, and `""` → the base itself. The callback methods (`get(_:parameters:headers:…)`) create,
/// resume and return the task like AFNetworking's; the `async` ones return a ``DataResponse`` and cancel the request
/// when the calling Swift task is cancelled.
open class HTTPSessionManager: SessionManager, @unchecked Sendable {
    /// The URL relative strings resolve against; a base with a non-empty path always ends in `/`.
    public let baseURL: URL?
    /// ``baseURL``'s string when it has no query or fragment, so plain paths can be appended to it.
    private let plainBaseString: String?
    /// URLs of the 64 most recently used plain relative paths (see ``appendingPlainPath(_:toBaseString:)``):
    /// parsing one costs about a microsecond, and an API's calls repeat a handful of paths.
    private let resolvedPaths = RecentValues<String, URL>(limit: 64)

    private let serializer = Locked<any RequestSerializer>(HTTPRequestSerializer())

    /// Builds requests from methods, URL strings and parameters; default ``HTTPRequestSerializer``.
    public var requestSerializer: any RequestSerializer {
        get { serializer.withLock { $0 } }
        set { serializer.withLock { $0 = newValue } }
    }

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - baseURL: the base for relative URL strings; a `/` is added to a non-empty path that lacks one.
    ///   - configuration: timeouts, headers, cookies, redirects.
    ///   - transport: the platform's default when `nil`.
    public init(baseURL: URL? = nil, configuration: SessionConfiguration = .default, transport: (any Transport)? = nil)
    {
        let baseURL = baseURL.map(Self.normalizedBaseURL)
        self.baseURL = baseURL
        plainBaseString = baseURL.flatMap { $0.query == nil && $0.fragment == nil ? $0.absoluteString : nil }
        super.init(configuration: configuration, transport: transport)
    }

    /// Sets the policy for hosts without their own, refusing a pinning policy unless ``baseURL`` is `https`, as
    /// AFNetworking does (it raises; Courier throws).
    ///
    /// - Throws: ``SecurityPolicyError/pinningRequiresHTTPSBaseURL(_:)``.
    open override func setSecurityPolicy(_ policy: SecurityPolicy) throws {
        try checkPinningAllowed(policy)
        try super.setSecurityPolicy(policy)
    }

    /// Sets the per-host table, refusing a pinning default policy unless ``baseURL`` is `https`.
    ///
    /// - Throws: ``SecurityPolicyError/pinningRequiresHTTPSBaseURL(_:)``.
    open override func setSecurityPolicies(_ policies: SecurityPolicies) throws {
        try checkPinningAllowed(policies.defaultPolicy)
        try super.setSecurityPolicies(policies)
    }

    private func checkPinningAllowed(_ policy: SecurityPolicy) throws {
        guard policy.pinningMode != .none, baseURL?.scheme?.lowercased() != "https" else { return }
        throw SecurityPolicyError.pinningRequiresHTTPSBaseURL(baseURL?.absoluteString)
    }

    /// RFC 3986 resolution's common case without Foundation's general (and slow) resolver: a relative path with no
    /// scheme, authority, dot segments or leading `/`, against a base (given as its string, with no query or
    /// fragment) whose path ends in `/`, is the base followed by the path. Anything else returns `nil` and takes the
    /// general route.
    static func appendingPlainPath(_ relative: String, toBaseString baseString: String) -> URL? {
        guard baseString.hasSuffix("/"), isPlainRelativePath(relative) else { return nil }
        return URL(string: baseString + relative)
    }

    /// Whether the path part of `relative` (before any `?` or `#`) is non-empty, does not start with `/`, and has
    /// no `:`, no empty segment (`//`) and no `.` or `..` segment: one pass over its bytes.
    private static func isPlainRelativePath(_ relative: String) -> Bool {
        var segmentLength = 0
        var segmentDots = 0
        var sawAny = false
        for byte in relative.utf8 {
            switch byte {
            case UInt8(ascii: "?"), UInt8(ascii: "#"):
                return sawAny && !(segmentDots > 0 && segmentDots == segmentLength)
            case UInt8(ascii: ":"):
                return false
            case UInt8(ascii: "/"):
                // An empty segment is `//` or a leading `/`; a segment of dots only is `.` or `..` (or more).
                if segmentLength == 0 || segmentDots == segmentLength { return false }
                segmentLength = 0
                segmentDots = 0
            case UInt8(ascii: "."):
                segmentLength += 1
                segmentDots += 1
            default:
                segmentLength += 1
            }
            sawAny = true
        }
        return sawAny && !(segmentDots > 0 && segmentDots == segmentLength)
    }

    static func normalizedBaseURL(_ url: URL) -> URL {
        guard !url.path.isEmpty, !url.absoluteString.hasSuffix("/") else { return url }
        return url.appendingPathComponent("")
    }

    /// The absolute URL for `urlString`: resolved against ``baseURL`` when there is one.
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` when it does not resolve.
    public func url(for urlString: String) throws -> URL {
        guard let baseURL else {
            guard let url = URL(string: urlString), url.scheme != nil else { throw CourierError.invalidURL(urlString) }
            return url
        }
        // Foundation on Linux resolves the empty reference to nil; RFC 3986 §5.2.2 makes it the base itself.
        if urlString.isEmpty { return baseURL }
        if let plainBaseString,
            let appended = resolvedPaths.value(
                for: urlString, makeIfPossible: { Self.appendingPlainPath(urlString, toBaseString: plainBaseString) })
        {
            return appended
        }
        guard let url = URL(string: urlString, relativeTo: baseURL)?.absoluteURL else {
            throw CourierError.invalidURL(urlString)
        }
        return url
    }

    /// The request for a call: serialized by ``requestSerializer``, then `headers` set over the serializer's
    /// defaults of the same name.
    public func makeRequest(method: String, urlString: String, parameters: Parameter?, headers: HTTPHeaderFields) throws
        -> URLRequest
    {
        try Self.makeRequest(
            method: method, url: try url(for: urlString), parameters: parameters, headers: headers,
            serializer: requestSerializer)
    }

    private static func makeRequest(
        method: String, url: URL, parameters: Parameter?, headers: HTTPHeaderFields, serializer: any RequestSerializer
    ) throws -> URLRequest {
        var request = try serializer.request(method: method, url: url, parameters: parameters)
        for field in headers { request.setValue(field.value, forHTTPHeaderField: field.name) }
        return request
    }

    // MARK: async/await

    /// Sends a request and serializes the response with `serializer`.
    ///
    /// Cancelling the calling Swift task cancels the request.
    ///
    /// - Throws: ``CourierError`` with the request, response and body attached.
    public func send<Serializer: ResponseSerializer>(
        _ method: String, _ urlString: String, parameters: Parameter? = nil,
        headers: HTTPHeaderFields = HTTPHeaderFields(),
        serializer: Serializer
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let request = try taskRequest(method: method, urlString: urlString, parameters: parameters, headers: headers)
        return try await run(request, body: nil, serializer: serializer)
    }

    /// The request of ``send(_:_:parameters:headers:serializer:)``. Synchronous and not inlined, like the other
    /// steps around the `async` calls' awaits, so that what it uses is not kept in the frame of a request waiting
    /// for its response.
    @inline(never)
    private func taskRequest(
        method: String, urlString: String, parameters: Parameter?, headers: HTTPHeaderFields
    ) throws -> TaskRequest {
        let url = try url(for: urlString)
        let requestSerializer = requestSerializer
        // A request without a body or headers of its own goes out as the serializer's plain request: its
        // `URLRequest` is made from it only if something asks.
        if headers.isEmpty, let plainSerializer = requestSerializer.baseSerializer,
            let plain = try plainSerializer.plainRequest(method: method, url: url, parameters: parameters)
        {
            return .plain(plain, plainSerializer)
        }
        return .made(
            try Self.makeRequest(
                method: method, url: url, parameters: parameters, headers: headers, serializer: requestSerializer))
    }

    /// Sends a prepared request (a `URLRequest`, or what a ``URLRequestConvertible`` such as an app's router makes)
    /// and serializes the response with `serializer`; `interceptor`, when given, adapts and retries this request
    /// after the session's ``SessionConfiguration/interceptor``, and `hooks` replace the session's redirect, caching
    /// and authentication hooks and credential for this request.
    ///
    /// - Throws: what making the request throws, as a ``CourierError`` (a non-Courier error inside
    ///   ``CourierError/requestFailed(underlyingError:context:)``), before anything is sent; then ``CourierError``
    ///   with the request, response and body attached.
    public func send<Serializer: ResponseSerializer>(
        _ request: some URLRequestConvertible, serializer: Serializer, interceptor: (any RequestInterceptor)? = nil,
        hooks: TaskHooks? = nil
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        try await run(
            .made(try Self.request(from: request)), body: nil, serializer: serializer, interceptor: interceptor,
            taskHooks: hooks)
    }

    /// Runs one task for the `async` API: a data task, or an upload task when there is a `body`.
    func run<Serializer: ResponseSerializer>(
        _ request: URLRequest, body: HTTPRequestBody?, uploadProgress: (@Sendable (TaskProgress) -> Void)?,
        serializer: Serializer, interceptor: (any RequestInterceptor)? = nil
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        try await run(
            .made(request), body: body, uploadProgress: uploadProgress, serializer: serializer, interceptor: interceptor
        )
    }

    /// ``run(_:body:uploadProgress:serializer:interceptor:)`` for a request made or plain: the task and its
    /// delegate, then its exchanges on the session's one road (`TaskExchange`).
    private func run<Serializer: ResponseSerializer>(
        _ request: TaskRequest, body: HTTPRequestBody?, uploadProgress: (@Sendable (TaskProgress) -> Void)? = nil,
        serializer: Serializer, interceptor: (any RequestInterceptor)? = nil, taskHooks: TaskHooks? = nil
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let started = Date()
        let (task, delegate) = register(
            request, body: body, uploadProgress: uploadProgress, serializer: serializer, interceptor: interceptor,
            taskHooks: taskHooks)
        let (value, data) = try await core.runTyped(task, delegate: delegate, serializer: serializer)
        return try Self.response(of: task, value: value, data: data, started: started)
    }

    /// A registered task for `request`, with its delegate.
    @inline(never)
    private func register<Serializer: ResponseSerializer>(
        _ request: TaskRequest, body: HTTPRequestBody?, uploadProgress: (@Sendable (TaskProgress) -> Void)?,
        serializer: Serializer, interceptor: (any RequestInterceptor)?, taskHooks: TaskHooks?
    ) -> (SessionTask, TaskDelegate) {
        let task =
            body == nil ? DataTask(source: request, controller: core) : UploadTask(source: request, controller: core)
        let delegate = TaskDelegate(
            for: task, serializer: serializer, uploadBody: body, uploadProgress: uploadProgress,
            hopsToCompletionQueue: false, interceptor: interceptor, taskHooks: taskHooks)
        core.register(task, delegate: delegate)
        return (task, delegate)
    }

    /// What the `async` call returns for a task that succeeded.
    @inline(never)
    private static func response<Value>(
        of task: SessionTask, value: Value, data: Data, started: Date
    ) throws -> DataResponse<Value> {
        guard let head = task.head else {
            throw CourierError.badServerResponse(
                reason: "no response", underlyingError: nil, context: .init(request: task.currentRequest))
        }
        return DataResponse(
            task: task, head: head, data: data, value: value, metrics: DataResponse.Metrics(start: started, end: Date())
        )
    }

    /// Sends a request and decodes the response body as `type` (JSON by default).
    public func send<Value: Decodable & Sendable>(
        _ method: String, _ urlString: String, parameters: Parameter? = nil,
        headers: HTTPHeaderFields = HTTPHeaderFields(),
        as type: Value.Type, decoder: any DataDecoder = .defaultJSON
    ) async throws -> DataResponse<Value> {
        // Straight to `run`, not through `send(_:_:parameters:headers:serializer:)`: one frame fewer for a request
        // waiting in line (see `ExchangeAdmission`).
        let request = try taskRequest(method: method, urlString: urlString, parameters: parameters, headers: headers)
        return try await run(request, body: nil, serializer: DecodableResponseSerializer(type, decoder: decoder))
    }

    /// GET, decoding the body as `type`.
    public func get<Value: Decodable & Sendable>(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        as type: Value.Type,
        decoder: any DataDecoder = .defaultJSON
    ) async throws -> DataResponse<Value> {
        // Straight to `run`, as `send(_:_:parameters:headers:as:decoder:)` does: one frame fewer for a request
        // waiting in line (see `ExchangeAdmission`).
        let request = try taskRequest(method: "GET", urlString: urlString, parameters: parameters, headers: headers)
        return try await run(request, body: nil, serializer: DecodableResponseSerializer(type, decoder: decoder))
    }

    /// GET, parsing the body as ``JSON``.
    public func get(_ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields())
        async throws -> DataResponse<JSON?>
    {
        try await send("GET", urlString, parameters: parameters, headers: headers, serializer: JSONResponseSerializer())
    }

    /// HEAD: the response head, no body.
    public func head(_ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields())
        async throws -> DataResponse<Data?>
    {
        try await send(
            "HEAD", urlString, parameters: parameters, headers: headers, serializer: HTTPResponseSerializer())
    }

    /// POST, decoding the body as `type`.
    public func post<Value: Decodable & Sendable>(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        as type: Value.Type,
        decoder: any DataDecoder = .defaultJSON
    ) async throws -> DataResponse<Value> {
        try await send("POST", urlString, parameters: parameters, headers: headers, as: type, decoder: decoder)
    }

    /// PUT, decoding the body as `type`.
    public func put<Value: Decodable & Sendable>(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        as type: Value.Type,
        decoder: any DataDecoder = .defaultJSON
    ) async throws -> DataResponse<Value> {
        try await send("PUT", urlString, parameters: parameters, headers: headers, as: type, decoder: decoder)
    }

    /// PATCH, decoding the body as `type`.
    public func patch<Value: Decodable & Sendable>(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        as type: Value.Type,
        decoder: any DataDecoder = .defaultJSON
    ) async throws -> DataResponse<Value> {
        try await send("PATCH", urlString, parameters: parameters, headers: headers, as: type, decoder: decoder)
    }

    /// DELETE, decoding the body as `type`.
    public func delete<Value: Decodable & Sendable>(
        _ urlString: String, parameters: Parameter? = nil, headers: HTTPHeaderFields = HTTPHeaderFields(),
        as type: Value.Type,
        decoder: any DataDecoder = .defaultJSON
    ) async throws -> DataResponse<Value> {
        try await send("DELETE", urlString, parameters: parameters, headers: headers, as: type, decoder: decoder)
    }
}

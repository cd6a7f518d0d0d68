import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Moves one HTTP exchange over the network: Courier's seam between the session layer and an HTTP client.
///
/// A transport sends exactly the request it is given: it follows no redirects, stores no cookies and caches
/// nothing; the session does all of that, the same way on every transport. The response body is pulled: a
/// transport reads no further than its consumer has asked, which is how a suspended task stops the download.
///
/// Cancelling the Swift task that awaits ``send(_:)`` or iterates the body cancels the exchange.
public protocol Transport: Sendable {
    /// Sends `request` and returns as soon as the response head has arrived.
    ///
    /// - Throws: ``CourierError`` (connection failures, timeouts, cancellation).
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// Runs a whole exchange and returns the response with its whole body as one chunk
    /// (`DataChunks.whole` is set).
    ///
    /// Sessions use it for the common task whose body nobody watches chunk by chunk: an `async` call whose caller
    /// awaits the whole value anyway. Timeouts and ``SessionTask/cancel()`` reach the exchange through
    /// `cancellation`, so the session needs no Swift task of its own and the call runs in its caller's task. The
    /// default implementation runs ``send(_:)`` in a child task and gathers the body; a transport that can gather
    /// where the bytes arrive (``NIOTransport`` does, on its event loop) implements it to save the hand-off per
    /// chunk.
    ///
    /// - Parameters:
    ///   - request: the request; its body, if any, is in memory (``HTTPRequestBody/data``).
    ///   - cancellation: aborts the exchange from any thread; cancelling the awaiting Swift task does too.
    ///   - activity: called whenever bytes arrive, for the session's idle timeout.
    /// - Throws: ``CourierError``, as ``send(_:)`` does.
    func collect(
        _ request: TransportRequest, cancellation: ExchangeCancellation, activity: @escaping @Sendable () -> Void
    ) async throws -> TransportResponse

    /// Starts ``collect(_:cancellation:activity:)``'s exchange at once and returns without waiting, so the session
    /// can set its task up while the request is on its way; `nil` when the exchange cannot start without waiting
    /// for something first, and then the session calls ``collect(_:cancellation:activity:)``. The default returns
    /// `nil`.
    ///
    /// - Throws: ``CourierError`` when the request cannot be sent at all.
    func startCollecting(
        _ request: TransportRequest, cancellation: ExchangeCancellation, activity: @escaping @Sendable () -> Void
    ) throws -> CollectedResponse?

    /// Opens a WebSocket connection for an upgrade request (see ``WebSocketConnection``); the default fails with
    /// ``CourierError/unsupportedURL(_:reason:context:)``.
    func openWebSocket(_ request: TransportRequest, configuration: WebSocketConfiguration) async throws
        -> any WebSocketConnection

    /// Releases the transport's connections. Requests sent afterwards fail.
    func shutdown() async

    /// How many tasks with one origin (scheme, host and port) a session lets start their exchanges on this transport
    /// at once; `nil`, the default, for no bound. The others wait in the session, in order, before anything of their
    /// exchange is made, so that a request waiting for a connection costs little memory. A bound somewhat above what
    /// the transport runs at once (its connections, its HTTP/2 streams) keeps its own queue fed.
    var maximumExchangesPerOrigin: Int? { get }
}

/// What a transport sends: a request head and an optional streaming body.
public struct TransportRequest: Sendable {
    /// The method, upper-case.
    public var method: String
    /// The absolute URL.
    public var url: URL
    /// The header fields, in order; `Content-Length` and `Transfer-Encoding` are the transport's to set.
    public var headers: HTTPHeaderFields
    /// The body, if any.
    public var body: HTTPRequestBody?
    /// Called with the total number of body bytes handed to the network so far.
    public var bodyProgress: (@Sendable (Int64) -> Void)?
    /// The policy the server's certificate chain must pass before any byte of the request is written (`https`
    /// only); ``SecurityPolicy/default`` leaves trust to the platform. A transport that cannot apply a non-default
    /// policy must fail the request rather than ignore it.
    public var securityPolicy: SecurityPolicy = .default
    /// The HTTP versions it may use; default ``HTTPVersionPolicy/automatic``. A transport that cannot keep to
    /// ``HTTPVersionPolicy/http1Only`` over TLS fails the request rather than ignore it.
    public var httpVersion: HTTPVersionPolicy = .automatic
    /// The proxy to send it through; `nil` to connect to the origin directly. The ``securityPolicy`` still applies to
    /// the origin's certificate, through the tunnel. A transport that cannot use the proxy fails the request rather
    /// than going direct.
    public var proxy: Proxy?
    /// The most response-body bytes (after decompression) ``Transport/collect(_:cancellation:activity:)`` may gather;
    /// a body whose `Content-Length` says more, or that grows past it, fails the exchange with
    /// ``CourierError/responseTooLarge(limit:context:)`` and its connection is closed. `nil`, the default: no limit.
    /// ``Transport/send(_:)`` leaves the limit to whoever reads the body. Sessions set it to
    /// ``SessionConfiguration/maximumInMemoryBodySize``.
    public var maximumCollectedBodySize: Int?

    /// Creates a request.
    public init(
        method: String, url: URL, headers: HTTPHeaderFields = HTTPHeaderFields(), body: HTTPRequestBody? = nil,
        bodyProgress: (@Sendable (Int64) -> Void)? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.bodyProgress = bodyProgress
    }
}

/// What a transport returns: the response head and the body still to be read.
public struct TransportResponse: Sendable {
    /// The status code.
    public var statusCode: Int
    /// The header fields, repeated names kept (e.g. several `Set-Cookie`).
    public var headers: HTTPHeaderFields
    /// The URL the response is for.
    public var url: URL
    /// The version the response came with: `HTTP/1.1`, `HTTP/1.0` or `HTTP/2`.
    public var httpVersion: String
    /// The body, read once by pulling.
    public var body: DataChunks
    /// What the transport measured of the exchange up to now (see ``TransactionMetrics`` for what each transport
    /// sees); `nil` when it measures nothing, and then the session records the dates it sees itself.
    public var metrics: TransactionMetrics? {
        get { measured?.metrics }
        set { measured = newValue.map(MeasuredTransaction.init) }
    }
    /// Behind a reference: a response is copied through the frames of every request waiting for its connection,
    /// and the metrics are most of its size inline.
    private var measured: MeasuredTransaction?

    /// Creates a response.
    public init(statusCode: Int, headers: HTTPHeaderFields, url: URL, httpVersion: String, body: DataChunks) {
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
        self.httpVersion = httpVersion
        self.body = body
    }

    /// The head as Foundation's `HTTPURLResponse`; repeated fields are joined with `, `.
    public func makeHTTPURLResponse() -> HTTPURLResponse? {
        ResponseHead.makeHTTPURLResponse(statusCode: statusCode, headers: headers, url: url, httpVersion: httpVersion)
    }
}

extension ResponseHead {
    /// The head of a transport's response.
    public init(_ response: TransportResponse) {
        self.init(
            statusCode: response.statusCode, headers: response.headers, url: response.url,
            httpVersion: response.httpVersion)
    }
}

extension Transport {
    /// Sends `request` with ``send(_:)`` in a child task that `cancellation` can cancel, and gathers the body.
    public func collect(
        _ request: TransportRequest, cancellation: ExchangeCancellation, activity: @escaping @Sendable () -> Void
    ) async throws -> TransportResponse {
        try await collectBySending(request, cancellation: cancellation, activity: activity)
    }

    /// The default ``collect(_:cancellation:activity:)``, for transports that gather some exchanges themselves and
    /// leave the rest (a body that is not in memory) to ``send(_:)``.
    func collectBySending(
        _ request: TransportRequest, cancellation: ExchangeCancellation, activity: @escaping @Sendable () -> Void
    ) async throws -> TransportResponse {
        if Task.isCancelled || cancellation.isCancelled {
            throw CourierError.cancelled(context: CourierError.Context())
        }
        let limit = request.maximumCollectedBodySize.map { max($0, 0) }
        let exchange = Task {
            let response = try await send(request)
            activity()
            try CollectedBodyLimit.checkDeclaredLength(
                limit, method: request.method, statusCode: response.statusCode, headers: response.headers)
            var gathered = Data()
            var iterator = response.body.makeAsyncIterator()
            while let chunk = try await iterator.next() {
                activity()
                if let limit, chunk.count > limit - gathered.count { throw CollectedBodyLimit.error(limit) }
                gathered.append(chunk)
            }
            var collected = response
            collected.body = DataChunks(gathered)
            return collected
        }
        cancellation.onCancel { exchange.cancel() }
        defer { cancellation.clear() }
        return try await withTaskCancellationHandler {
            try await exchange.value
        } onCancel: {
            exchange.cancel()
        }
    }

    /// `nil`: the session hands every request to the transport at once.
    public var maximumExchangesPerOrigin: Int? { nil }

    /// The ``maximumExchangesPerOrigin`` of Courier's transports for `connections` per host: four requests a
    /// connection, so that each finds its next one ready, and at least 128, an HTTP/2 connection's usual stream limit.
    static func exchangeBound(connectionsPerHost connections: Int) -> Int {
        max(128, 4 * min(max(connections, 1), 1 << 20))
    }

    /// Returns `nil`: the exchange starts when the session calls ``collect(_:cancellation:activity:)``.
    public func startCollecting(
        _ request: TransportRequest, cancellation: ExchangeCancellation, activity: @escaping @Sendable () -> Void
    ) throws -> CollectedResponse? {
        nil
    }
}

/// A transaction's metrics, kept by reference in a ``TransportResponse``.
private final class MeasuredTransaction: Sendable {
    let metrics: TransactionMetrics

    init(_ metrics: TransactionMetrics) {
        self.metrics = metrics
    }
}

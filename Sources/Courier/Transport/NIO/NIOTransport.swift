import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import Tracing

/// The transport on SwiftNIO and AsyncHTTPClient: Courier's default on Linux.
///
/// Redirects are never followed here (the session follows them, so its hook sees every hop), and bodies stream in
/// both directions with backpressure. The configuration is set explicitly rather than inherited from
/// AsyncHTTPClient's defaults: see ``Configuration``.
///
/// Collected exchanges (``collect(_:cancellation:activity:)``, what the `async` calls use) of `http` and `https`
/// requests without a proxy run on the transport's own connections (HTTP/1.1, or HTTP/2 when TLS negotiates it, one
/// connection per origin), which cost less per exchange than AsyncHTTPClient's; everything else (``send(_:)``,
/// proxies) runs on AsyncHTTPClient. The two keep separate pools, each with at most
/// ``Configuration/maximumConnectionsPerHost`` HTTP/1.1 connections to a host.
///
/// In a server app (Vapor, Hummingbird), the transport can run on the app's event-loop group
/// (``init(configuration:eventLoopGroup:)``) or send through the app's `HTTPClient` (``init(configuration:httpClient:)``)
/// rather than NIO's shared group: the caller then keeps the group or client and shuts it down itself.
///
/// The `HTTPClient`s the transport makes are shut down by ``shutdown()``, or, without waiting, when the transport is
/// released; a given group or client is never shut down by the transport.
public final class NIOTransport: Transport {

    /// The configuration the client was made with.
    public let configuration: Configuration
    let client: HTTPClient
    /// Whether ``client`` was made here (and is shut down here) rather than given by the caller.
    let ownsClient: Bool
    /// The event loops every connection of the transport runs on: the caller's, or NIO's shared group.
    let group: any EventLoopGroup
    let settings: HTTPClient.Configuration
    /// Clients for requests that ``client`` cannot send: through a proxy, or kept to HTTP/1.1 over TLS when
    /// ``client`` may negotiate HTTP/2 (``TransportRequest/httpVersion``); made on first use, one per kind.
    let otherClients = Locked([ClientKind: HTTPClient]())

    /// What makes a client other than ``client``.
    struct ClientKind: Hashable, Sendable {
        var http1Only = false
        var proxy: Proxy?
        /// A URL host and the address a ``Configuration/connectionRoutes`` route sends its connections to.
        var hostOverride: HostOverride?
    }

    /// AsyncHTTPClient's `dnsOverride` entry for a routed host.
    struct HostOverride: Hashable, Sendable {
        var host: String
        var address: String
    }
    /// Where a collected exchange starts and its delegate runs when it is the only one in flight: new connections
    /// for it are made on this loop and idle ones on it are preferred, so one exchange at a time does not hop
    /// between loops.
    private let preferredLoop: any EventLoop
    /// Collected exchanges in flight. With one, it stays on ``preferredLoop`` and wakes its waiting caller early
    /// (``CollectedResponse/headArrived()``), which pays only while the caller's threads are idle; with others in
    /// flight, exchanges are spread over the group's loops and the early wake-up would be a second one for nothing.
    private let collectedInFlight = Locked(0)
    /// Courier's own connections for collected exchanges (see ``Configuration/usesOwnConnections``).
    private let http1Pool: NIOHTTP1Pool
    /// The pool's view of the most recently used URLs; `nil` for those it does not serve.
    private let http1Targets = RecentValues<URL, NIOHTTP1Target>(limit: 64)
    /// The own connections' TLS, per policy and HTTP version choice.
    let tlsProfiles = Locked(TLSProfiles())
    /// One gate, with its own client, per origin and non-default security policy.
    let gates = Locked(TrustGates())
    /// AsyncHTTPClient's requests for the 64 most recently used methods and URLs, without headers or body. Making
    /// one parses the URL again (2–3 µs, on the way to the event loop), so a repeated call copies a parsed one.
    private let requestTemplates = RecentValues<RequestTemplateKey, HTTPClient.Request>(limit: 64)

    private struct RequestTemplateKey: Hashable {
        var method: String
        var url: URL
    }

    /// Creates a transport with its own connection pools, on `eventLoopGroup` or, by default, on NIO's shared group.
    ///
    /// - Parameters:
    ///   - configuration: How the transport connects.
    ///   - eventLoopGroup: The group every connection runs on, e.g. a Vapor or Hummingbird app's: it must be a group of
    ///     NIO's POSIX event loops (`MultiThreadedEventLoopGroup`). The transport does not shut it down; shut it down
    ///     after the transport's ``shutdown()``.
    public convenience init(configuration: Configuration = Configuration(), eventLoopGroup: (any EventLoopGroup)? = nil)
    {
        self.init(configuration: configuration, group: eventLoopGroup ?? HTTPClient.defaultEventLoopGroup, client: nil)
    }

    /// Creates a transport that sends through `httpClient` (e.g. a Vapor app's `app.http.client.shared`), and runs its
    /// own connections on that client's event-loop group.
    ///
    /// The client's own settings apply to what goes through it: it must be made with
    /// `redirectConfiguration: .disallow`, since the session follows redirects itself (a redirect the client followed
    /// would bypass the session's redirect rules; the transport cannot read the client's settings, so an exchange in
    /// which the client followed one fails with ``CourierError/unsupportedURL(_:reason:context:)``, code -1002, once
    /// the redirect has been sent). Requests the client cannot send as asked (through a
    /// proxy, under a non-default ``SecurityPolicy``, kept to HTTP/1.1 over TLS) go through clients the transport makes
    /// on the same group from `configuration`, and collected exchanges without a proxy through Courier's own connections
    /// (``Configuration/usesOwnConnections``), except `https` ones under the default policy, which keep the client's
    /// TLS settings. The transport does not shut `httpClient` down.
    public convenience init(configuration: Configuration = Configuration(), httpClient: HTTPClient) {
        self.init(configuration: configuration, group: httpClient.eventLoopGroup, client: httpClient)
    }

    private init(configuration: Configuration, group: any EventLoopGroup, client given: HTTPClient?) {
        self.configuration = configuration
        self.group = group
        preferredLoop = group.next()
        var settings = HTTPClient.Configuration()
        settings.redirectConfiguration = .disallow
        settings.timeout = .init(connect: .milliseconds(CheckedConversion.milliseconds(configuration.connectTimeout)))
        settings.connectionPool = .init(
            idleTimeout: .milliseconds(CheckedConversion.milliseconds(configuration.idleConnectionTimeout)),
            concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maximumConnectionsPerHost)
        settings.connectionPool.retryConnectionEstablishment = configuration.retriesFailedConnections
        settings.maximumUsesPerConnection = configuration.maximumRequestsPerConnection.map { max(1, $0) }
        settings.dnsOverride = configuration.hostAddresses
        settings.localAddress = configuration.localAddress
        if !configuration.hasDefaultTLS { settings.tlsConfiguration = configuration.baseTLS }
        settings.httpVersion = configuration.allowsHTTP2 ? .automatic : .http1Only
        settings.decompression =
            configuration.decompresses ? .enabled(limit: .ratio(configuration.decompressionRatioLimit)) : .disabled
        // AsyncHTTPClient starts a span for every request even with the no-op tracer, and fills the span's
        // attributes from the URL's parts: about 10 µs on the event loop per exchange. Like AsyncHTTPClient, the
        // transport keeps the tracer bootstrapped when it is made; only when there is none does it skip spans.
        if settings.tracing.tracer is NoOpTracer { settings.tracing.tracer = nil }
        settings.http1_1ConnectionDebugInitializer = { NIOResponseHeadGuard.install(on: $0) }
        settings.http2ConnectionDebugInitializer = { NIOConnectionReporter.recordHTTP2Connection($0) }
        settings.http2StreamChannelDebugInitializer = { NIOResponseHeadGuard.installOnHTTP2Stream($0) }
        self.settings = settings
        client = given ?? HTTPClient(eventLoopGroup: group, configuration: settings)
        ownsClient = given == nil
        http1Pool = NIOHTTP1Pool(
            group: group,
            connectTimeout: .milliseconds(CheckedConversion.milliseconds(configuration.connectTimeout)),
            idleTimeout: .milliseconds(CheckedConversion.milliseconds(configuration.idleConnectionTimeout)),
            maximumPerOrigin: configuration.maximumConnectionsPerHost, dialOptions: configuration.dialOptions,
            decompressionLimit: configuration.decompresses ? .ratio(configuration.decompressionRatioLimit) : nil)
    }

    deinit {
        // Starts the shutdown without waiting; the client keeps itself alive until it is done. The callback form makes
        // no promise on the group, which a caller may have shut down already (after ``shutdown()``).
        if ownsClient { client.shutdown { _ in } }
        for other in otherClients.withLock({ $0.values }) { other.shutdown { _ in } }
    }

    /// The request's fields as AsyncHTTPClient takes them. It checks that every name is a token but lets an empty
    /// one through (it has no byte that could fail), which would go out as a line starting with `:`; refused here,
    /// as Courier's own connections refuse it, before anything is sent.
    static func asyncHTTPClientHeaders(_ request: TransportRequest) throws -> HTTPHeaders {
        if request.headers.contains(where: { $0.name.isEmpty }) {
            throw courierError(HTTPClientError.invalidHeaderFieldNames([""]), url: request.url, proxy: request.proxy)
        }
        return request.headers.nio
    }

    /// Sends the request; see ``Transport/send(_:)``.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        // AsyncHTTPClient may still send a request whose task is already cancelled; never start one.
        if Task.isCancelled { throw CourierError.cancelled(context: CourierError.Context()) }
        let fetchStart = Date()
        let addressing = try clientAddressing(for: request)
        var outgoing = HTTPClientRequest(url: addressing.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        outgoing.headers = try Self.asyncHTTPClientHeaders(request)
        if let host = addressing.hostField { outgoing.headers.replaceOrAdd(name: "Host", value: host) }
        var sentWholeBodyUpFront: Int64?
        // A body that is not a one-shot stream can be sent again; see ``mayRetryOnAnotherConnection(method:)``.
        let replayable = request.body?.isReplayable ?? true
        if let body = request.body, let data = body.data, data.count <= 64 * 1024 {
            outgoing.body = .bytes(ByteBuffer(data: data))
            sentWholeBodyUpFront = Int64(data.count)
        } else {
            outgoing.body = try Self.streamedBody(of: request, group: group)
        }
        let client = try await client(enforcing: request)
        var timing = NIOExchangeTiming(requestStart: Date())
        var response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, deadline: .distantFuture)
        } catch {
            let error = Self.courierError(error, url: request.url, proxy: request.proxy)
            guard replayable, Self.mayRetryOnAnotherConnection(method: request.method), Self.isStaleConnection(error),
                !Task.isCancelled
            else { throw error }
            do {
                // A streamed body starts again from its first byte.
                if sentWholeBodyUpFront == nil { outgoing.body = try Self.streamedBody(of: request, group: group) }
                response = try await client.execute(outgoing, deadline: .distantFuture)
            } catch {
                throw Self.courierError(error, url: request.url, proxy: request.proxy)
            }
        }
        // Only a caller's client can follow one (the transport's own never do); its body is dropped, unread.
        if response.history.count > 1 { throw Self.redirectFollowedByClient(request.url) }
        if let sentWholeBodyUpFront { request.bodyProgress?(sentWholeBodyUpFront) }
        timing.responseStart = Date()
        timing.connection = NIOConnectionReporter.takeFacts(from: &response.headers)
        let url = request.url
        var metrics = timing.metrics(
            method: request.method, url: url, fetchStart: fetchStart, statusCode: Int(response.status.code))
        metrics.countOfRequestBodyBytesSent = sentWholeBodyUpFront ?? 0
        let body = DataChunks(response.body, transform: { Data(buffer: $0, byteTransferStrategy: .noCopy) })
        var transportResponse = TransportResponse(
            statusCode: Int(response.status.code), headers: HTTPHeaderFields(response.headers), url: url,
            httpVersion: response.version.courierString,
            body: DataChunks(makeNext: {
                var iterator = body.makeAsyncIterator()
                return {
                    do {
                        return try await iterator.next()
                    } catch {
                        throw Self.courierError(error, url: url, proxy: request.proxy)
                    }
                }
            }))
        transportResponse.metrics = metrics
        return transportResponse
    }

    /// Runs the whole exchange on AsyncHTTPClient's delegate API: the body is gathered on the connection's event loop
    /// and the caller resumes once, at the end. See ``Transport/collect(_:cancellation:activity:)``.
    public func collect(
        _ request: TransportRequest, cancellation: ExchangeCancellation, activity: @escaping @Sendable () -> Void
    ) async throws -> TransportResponse {
        // A body that is not in memory streams, with backpressure, through `send`.
        if let body = request.body, body.data == nil {
            return try await collectBySending(request, cancellation: cancellation, activity: activity)
        }
        if Task.isCancelled || cancellation.isCancelled {
            throw CourierError.cancelled(context: CourierError.Context())
        }
        let route: Route
        if let own = try ownRoute(for: request) {
            route = own
        } else {
            route = .client(try await client(enforcing: request))
        }
        return try await start(request, route: route, cancellation: cancellation, activity: activity).response()
    }

    /// Starts the exchange now, unless the request must first wait for its origin's trust to be evaluated. See
    /// ``Transport/startCollecting(_:cancellation:activity:)``.
    public func startCollecting(
        _ request: TransportRequest, cancellation: ExchangeCancellation, activity: @escaping @Sendable () -> Void
    ) throws -> CollectedResponse? {
        guard request.body.map({ $0.data != nil }) ?? true else { return nil }
        let route: Route
        if let own = try ownRoute(for: request) {
            route = own
        } else if let gate = try trustGate(for: request) {
            // Once the origin's trust is settled, the gate's client takes the request at once; until then it waits
            // for the evaluation, in `collect`.
            guard gate.isTrusted else { return nil }
            route = .client(gate.client)
        } else {
            route = .client(try sharedClient(for: request))
        }
        if cancellation.isCancelled { throw CourierError.cancelled(context: CourierError.Context()) }
        return try start(request, route: route, cancellation: cancellation, activity: activity)
    }

    /// Where a collected exchange runs: on Courier's own connections to an origin, or on an AsyncHTTPClient client.
    private enum Route {
        case own(NIOHTTP1Target, NIOHTTP1Target.Origin)
        case client(HTTPClient)
    }

    /// The own connections' route for `request`, when they serve it (see ``Configuration/usesOwnConnections``):
    /// `http` or `https` without a proxy; an `https` origin's TLS follows the request's policy and HTTP version. A
    /// caller's `HTTPClient` keeps the `https` requests under the default policy.
    private func ownRoute(for request: TransportRequest) throws -> Route? {
        guard configuration.ownConnectionsApply, request.proxy == nil, let target = http1Target(request.url) else {
            return nil
        }
        var origin = target.origin
        if target.isSecure {
            // A caller's `HTTPClient` brings its own TLS settings (its trust roots, say), which the default policy's
            // requests keep; another policy's never went through it.
            if !ownsClient, request.securityPolicy.isDefault { return nil }
            origin.tls = try tlsProfile(for: request)
        }
        return .own(target, origin)
    }

    private func start(
        _ request: TransportRequest, route: Route, cancellation: ExchangeCancellation,
        activity: @escaping @Sendable () -> Void
    ) throws -> CollectedResponse {
        let fetchStart = Date()
        let data = request.body?.data
        let (target, origin, client): (NIOHTTP1Target?, NIOHTTP1Target.Origin?, HTTPClient) =
            switch route {
            case .own(let target, let origin): (target, origin, self.client)
            case .client(let client): (nil, nil, client)
            }
        let head: HTTPRequestHead?
        do {
            head = try target?.head(method: request.method, fields: request.headers, bodyLength: data?.count)
        } catch {
            throw Self.courierError(error, url: request.url, proxy: request.proxy)
        }
        var template: HTTPClient.Request?
        if head == nil {
            let addressing = try clientAddressing(for: request)
            template = try requestTemplate(method: request.method, url: addressing.url)
            template?.headers = try Self.asyncHTTPClientHeaders(request)
            if let host = addressing.hostField { template?.headers.replaceOrAdd(name: "Host", value: host) }
        }
        template?.body = data.map { .byteBuffer(ByteBuffer(data: $0)) }
        let outgoing = template
        let body = data.flatMap { $0.isEmpty ? nil : ByteBuffer(data: $0) }
        let sentBody = data.flatMap { data in request.bodyProgress.map { (Int64(data.count), $0) } }
        let pending = CollectedResponse(cancellation: cancellation, sentBody: sentBody)
        let (url, method, proxy) = (request.url, request.method, request.proxy)
        let maximumBodySize = request.maximumCollectedBodySize
        let retriesStaleConnection = Self.mayRetryOnAnotherConnection(method: request.method)
        let alone = collectedInFlight.withLock { count -> Bool in
            count += 1
            return count == 1
        }
        // AsyncHTTPClient requires a delegate's loop to belong to the client's group.
        // One exchange at a time stays on one loop (its connection is then reused without a hop); with others in
        // flight, exchanges are spread over the group's loops, as AsyncHTTPClient spreads its own.
        let pinned = alone && client.eventLoopGroup === group
        let loop = pinned ? preferredLoop : client.eventLoopGroup.next()
        let inFlight = collectedInFlight
        let pool = http1Pool
        let smallHead: (@Sendable () -> Void)? = alone ? { @Sendable in pending.headArrived() } : nil
        @Sendable func finish(_ result: Result<NIOBodyGatherer.Gathered, any Error>, sawHead: Bool, attempt: Int) {
            let mapped = result.mapError { Self.courierError($0, url: url, proxy: proxy) }
            if case .failure(let cause) = result, case .failure(let error) = mapped, retriesStaleConnection,
                !sawHead, !cancellation.isCancelled,
                attempt == 0 && Self.isStaleConnection(error)
                    || attempt < Self.refusedStreamAttempts && Self.wasRefusedUnread(cause)
            {
                return run(attempt + 1)
            }
            inFlight.withLock { $0 -= 1 }
            pending.complete(
                mapped.map { gathered in
                    let statusCode = Int(gathered.head.status.code)
                    var response = TransportResponse(
                        statusCode: statusCode, headers: HTTPHeaderFields(gathered.head.headers),
                        url: url, httpVersion: gathered.head.version.courierString,
                        body: DataChunks(Data(buffer: gathered.body, byteTransferStrategy: .noCopy)))
                    var metrics = gathered.timing.metrics(
                        method: method, url: url, fetchStart: fetchStart, statusCode: statusCode)
                    metrics.countOfRequestBodyBytesSent = Int64(data?.count ?? 0)
                    metrics.countOfResponseBodyBytesReceived = Int64(gathered.body.readableBytes)
                    response.metrics = metrics
                    return response
                }.mapError { $0 as any Error })
        }
        @Sendable func run(_ attempt: Int) {
            if let head, let origin {
                let exchange = NIOHTTP1Exchange(
                    head: head, body: body, maximumBodySize: maximumBodySize, cancellation: cancellation,
                    activity: activity, smallHead: smallHead
                ) { finish($0, sawHead: $1, attempt: attempt) }
                return pool.execute(exchange, origin: origin, preferring: loop)
            }
            guard let outgoing else { return }
            let gatherer = NIOBodyGatherer(
                method: method, maximumBodySize: maximumBodySize, activity: activity, smallHead: smallHead)
            // With others in flight, AsyncHTTPClient picks the loop: its delegate then runs on the connection's
            // loop, one HTTP/2 connection's for all of an origin's streams, instead of hopping to another loop and
            // back for every callback (measured on HTTP/2 at c=32: 0.72x → 0.78x raw AsyncHTTPClient).
            let preference: HTTPClient.EventLoopPreference = pinned ? .delegate(on: loop) : .indifferent
            let exchange = client.execute(request: outgoing, delegate: gatherer, eventLoop: preference)
            cancellation.onCancel { exchange.cancel() }
            exchange.futureResult.whenComplete { result in
                finish(result.mapError { $0 as any Error }, sawHead: gatherer.sawHead, attempt: attempt)
            }
        }
        if head != nil || !pinned {
            run(0)
        } else {
            // Alone, started on the event loop itself, so that registering for the result is not a second
            // cross-thread wake-up of a loop that is waiting for the socket.
            loop.execute { run(0) }
        }
        return pending
    }

    /// The pool's view of `url`, or `nil` when the pool does not serve it (see ``NIOHTTP1Target/init(url:)``).
    private func http1Target(_ url: URL) -> NIOHTTP1Target? {
        http1Targets.value(for: url) { NIOHTTP1Target(url: url) }
    }

    /// The body of `request` as AsyncHTTPClient streams it (any body but a small `Data`), from its first byte.
    private static func streamedBody(of request: TransportRequest, group: any EventLoopGroup) throws
        -> HTTPClientRequest.Body?
    {
        guard let body = request.body else { return nil }
        if let file = body.file, let length = body.length {
            let buffers = FileBuffers(
                url: file.url, chunkSize: file.chunkSize, length: length, progress: request.bodyProgress, group: group)
            return .stream(buffers, length: .known(length))
        }
        let chunks = try body.makeChunks()
        let counted = ProgressCountingChunks(chunks: chunks, progress: request.bodyProgress, group: group)
        return .stream(counted, length: body.length.map { .known($0) } ?? .unknown)
    }

    /// AsyncHTTPClient's request for `method` and `url`, without headers or body; see ``requestTemplates``.
    private func requestTemplate(method: String, url: URL) throws -> HTTPClient.Request {
        do {
            return try requestTemplates.value(for: RequestTemplateKey(method: method, url: url)) {
                try HTTPClient.Request(url: url, method: HTTPMethod(rawValue: method))
            }
        } catch {
            throw Self.courierError(error, url: url)
        }
    }

    /// Four times ``Configuration/maximumConnectionsPerHost``, and at least 128: a session hands this transport that
    /// many tasks of one origin at once and keeps the rest waiting, cheaply, until one is done.
    public var maximumExchangesPerOrigin: Int? {
        Self.exchangeBound(connectionsPerHost: configuration.maximumConnectionsPerHost)
    }

    /// Closes the transport's own connections and shuts down the clients it made, waiting for them; a group or client
    /// the transport was given keeps running.
    public func shutdown() async {
        await http1Pool.shutdown()
        if ownsClient { try? await client.shutdown() }
        for other in otherClients.withLock({ $0.values }) { try? await other.shutdown() }
        for gate in gates.withLock({ $0.byKey.values }) { await gate.shutdown() }
    }

}

extension HTTPHeaderFields {
    /// NIO's response fields, in order, repeated names kept.
    init(_ fields: HTTPHeaders) {
        self.init()
        reserveCapacity(fields.count)
        for (name, value) in fields { add(name: name, value: value) }
    }

    /// The fields as AsyncHTTPClient takes them, in order.
    fileprivate var nio: HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(fields.count)
        for field in self { headers.add(name: field.name, value: field.value) }
        return headers
    }
}

extension HTTPVersion {
    /// E.g. `HTTP/1.1`, or `HTTP/2` (which has no minor version), as ``TransportResponse/httpVersion`` gives it.
    var courierString: String { major >= 2 ? "HTTP/\(major)" : "HTTP/\(major).\(minor)" }
}

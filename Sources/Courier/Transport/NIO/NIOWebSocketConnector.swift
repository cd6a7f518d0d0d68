import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import NIOWebSocket

/// Makes one WebSocket connection for ``NIOTransport``: TCP, then TLS with the request's ``SecurityPolicy`` evaluated
/// inside the handshake, then the HTTP/1.1 upgrade.
///
/// The upgrade request is written before the handshake ends, but NIOSSL holds every write until the handshake has
/// succeeded: a chain the policy refuses fails the connection with -1202 and the server never sees the request.
struct NIOWebSocketConnector {
    let request: TransportRequest
    let configuration: WebSocketConfiguration
    let group: any EventLoopGroup
    /// The transport's TLS versions and cipher suites.
    var baseTLS: TLSConfiguration = .makeClientConfiguration()
    /// Where the transport's connections connect.
    var dialOptions = NIODialOptions()

    private struct Target {
        var host: String
        var port: Int
        var secure: Bool
        var requestTarget: String
        var hostField: String
    }

    func connect() async throws -> NIOWebSocketConnection {
        let target = try Self.target(of: request.url)
        let loop = group.next()
        let opened = loop.makePromise(of: NIOWebSocketConnection.self)
        let evaluation = Locked<TrustEvaluation?>(nil)
        let tlsContext = try target.secure ? makeTLSContext() : nil
        let policy = request.securityPolicy
        // The upgrade exchange's dates, filled in as it goes; a new connection of its own, always HTTP/1.1.
        let timing = Locked(TransactionMetrics(method: "GET", url: request.url))
        timing.withLock { $0.networkProtocolName = "http/1.1" }
        let maximumMessageSize = max(1, min(configuration.maximumMessageSize, Int(UInt32.max)))
        let upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: maximumMessageSize, automaticErrorHandling: false,
            upgradePipelineHandler: { [offered = configuration.protocols] channel, response in
                if let problem = Self.handshakeProblem(response.headers, offered: offered) {
                    let head = ResponseHead(response, url: request.url).response
                    opened.fail(
                        CourierError.badServerResponse(
                            reason: problem, underlyingError: nil, context: CourierError.Context(response: head)))
                    return channel.close()
                }
                // The refusal handler sits before the frame decoder NIO has just added: frames must not reach it.
                return channel.pipeline.removeHandler(name: NIOWebSocketUpgradeRefusal.name).flatMapThrowing {
                    let tlsVersion = NIOConnectionReporter.tlsVersion(of: channel.pipeline.syncOperations)
                    let metrics = timing.withLock { metrics in
                        metrics.responseStartDate = Date()
                        metrics.statusCode = Int(response.status.code)
                        metrics.negotiatedTLSProtocolVersion = tlsVersion
                        return metrics
                    }
                    let connection = NIOWebSocketConnection(
                        channel: channel, upgradeResponse: ResponseHead(response, url: request.url),
                        metrics: metrics)
                    try channel.pipeline.syncOperations.addHandler(
                        NIOWebSocketHandler(connection: connection, maximumMessageSize: maximumMessageSize))
                    opened.succeed(connection)
                }
            })
        // A caller's timeout may be anything a Duration holds: clamped rather than overflowing TimeAmount.
        let timeout = TimeAmount.milliseconds(CheckedConversion.milliseconds(configuration.connectTimeout))
        let configure: @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void = { pipeline in
            if let tlsContext {
                let sni = NIOPolicyTLS.serverName(for: target.host)
                let handler: NIOSSLClientHandler
                if policy.isDefault {
                    handler = try NIOSSLClientHandler(context: tlsContext, serverHostname: sni)
                } else {
                    handler = try NIOSSLClientHandler(
                        context: tlsContext, serverHostname: sni,
                        customVerificationCallback: NIOPolicyTLS.verificationCallback(
                            policy: policy, host: target.host, eventLoop: pipeline.eventLoop
                        ) { found, _ in evaluation.withLock { $0 = found } })
                }
                try pipeline.addHandler(handler)
            }
            try pipeline.addHTTPClientHandlers(
                leftOverBytesStrategy: .forwardBytes,
                withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
            try pipeline.addHandler(
                NIOWebSocketUpgradeRefusal(promise: opened, url: request.url, timing: timing),
                name: NIOWebSocketUpgradeRefusal.name)
        }
        let channel: any Channel
        let connectStart = Date()
        do {
            // Through the proxy's tunnel when there is one: TLS, and the policy's check, are with the origin.
            channel = try await NIOProxyTunnel.connect(
                host: target.host, port: target.port, through: request.proxy, group: loop, dialOptions: dialOptions,
                timeout: timeout,
                configure: configure)
            let connected = Date()
            timing.withLock { metrics in
                (metrics.fetchStartDate, metrics.connectStartDate) = (connectStart, connectStart)
                if target.secure {
                    metrics.secureConnectionStartDate = connected
                } else {
                    metrics.connectEndDate = connected
                }
            }
        } catch {
            opened.fail(error)
            throw NIOTransport.courierError(error, url: request.url, proxy: request.proxy)
        }
        let deadline = loop.scheduleTask(in: timeout) {
            opened.fail(CourierError.timedOut(context: CourierError.Context()))
            channel.close(promise: nil)
        }
        channel.closeFuture.whenComplete { _ in opened.fail(ChannelError.eof) }
        var headers = HTTPHeaders()
        for field in request.headers {
            guard
                !["host", "content-length", "transfer-encoding", "connection", "upgrade"].contains(
                    field.name.lowercased())
            else { continue }
            headers.add(name: field.name, value: field.value)
        }
        headers.replaceOrAdd(name: "Host", value: target.hostField)
        if !configuration.protocols.isEmpty {
            headers.replaceOrAdd(name: "Sec-WebSocket-Protocol", value: configuration.protocols.joined(separator: ", "))
        }
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.requestTarget, headers: headers)
        timing.withLock { $0.requestStartDate = Date() }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        do {
            let connection = try await opened.futureResult.get()
            deadline.cancel()
            return connection
        } catch {
            deadline.cancel()
            channel.close(promise: nil)
            if let found = evaluation.withLock({ $0 }), !found.isTrusted {
                throw CourierError.serverTrustEvaluationFailed(host: target.host, reason: found.reason)
            }
            if let courier = error as? CourierError { throw courier }
            throw NIOTransport.courierError(error, url: request.url, proxy: request.proxy)
        }
    }

    /// Why the `101` must fail the connection (RFC 6455 §4.1), or `nil`: a subprotocol that was not offered (or more
    /// than one), or any extension, since none is offered.
    static func handshakeProblem(_ headers: HTTPHeaders, offered: [String]) -> String? {
        let extensions = headers[canonicalForm: "Sec-WebSocket-Extensions"].filter { !$0.isEmpty }
        if let chosen = extensions.first {
            return "the server chose the WebSocket extension “\(chosen)”, which was not offered"
        }
        let protocols = headers[canonicalForm: "Sec-WebSocket-Protocol"].filter { !$0.isEmpty }
        guard let chosen = protocols.first else { return nil }
        guard protocols.count == 1, offered.contains(String(chosen)) else {
            let chosen = protocols.joined(separator: ", ")
            return "the server chose the WebSocket subprotocol “\(chosen)”, which was not offered"
        }
        return nil
    }

    private func makeTLSContext() throws -> NIOSSLContext {
        let tls = try NIOPolicyTLS.clientConfiguration(for: request.securityPolicy, base: baseTLS)
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw CourierError.requestFailed(underlyingError: error, context: CourierError.Context())
        }
    }

    /// Where to connect and what the request line says, from a `ws`, `wss`, `http` or `https` URL.
    private static func target(of url: URL) throws -> Target {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { throw CourierError.invalidURL(url.absoluteString) }
        let secure: Bool
        switch scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default:
            throw CourierError.unsupportedURL(
                url, reason: "a WebSocket URL is ws, wss, http or https", context: CourierError.Context())
        }
        let port = url.port ?? (secure ? 443 : 80)
        guard (1...65535).contains(port) else { throw CourierError.invalidURL(url.absoluteString) }
        var requestTarget = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { requestTarget += "?" + query }
        guard !requestTarget.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw CourierError.invalidURL(url.absoluteString)
        }
        let bareHost = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let hostField =
            (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host)
            + (url.port.map { ":\($0)" } ?? "")
        return Target(host: bareHost, port: port, secure: secure, requestTarget: requestTarget, hostField: hostField)
    }
}

/// After the HTTP handlers: a response that reaches it is one the upgrade did not take (a status other than 101),
/// and an upgrade error (a bad `Sec-WebSocket-Accept`) ends here too; either fails the connection attempt.
private final class NIOWebSocketUpgradeRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    static let name = "courier-websocket-upgrade-refusal"

    private let promise: EventLoopPromise<NIOWebSocketConnection>
    private let url: URL
    private let timing: Locked<TransactionMetrics>

    init(promise: EventLoopPromise<NIOWebSocketConnection>, url: URL, timing: Locked<TransactionMetrics>) {
        self.promise = promise
        self.url = url
        self.timing = timing
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            let now = Date()
            timing.withLock { ($0.secureConnectionEndDate, $0.connectEndDate) = (now, now) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let response = ResponseHead(head, url: url).response
        promise.fail(
            CourierError.unacceptableStatusCode(
                Int(head.status.code), context: CourierError.Context(response: response), underlyingError: nil))
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(
            CourierError.badServerResponse(
                reason: "the WebSocket upgrade failed", underlyingError: error, context: CourierError.Context()))
        context.close(promise: nil)
    }
}

extension ResponseHead {
    /// The head of a NIO response for `url`.
    init(_ head: HTTPResponseHead, url: URL) {
        self.init(
            statusCode: Int(head.status.code), headers: HTTPHeaderFields(head.headers), url: url,
            httpVersion: head.version.courierString)
    }
}

extension NIOTransport {
    /// Opens a WebSocket connection on its own channel (not from the pool), with `request`'s security policy
    /// evaluated inside the TLS handshake, before the upgrade request is sent; see ``Transport/openWebSocket(_:configuration:)``.
    public func openWebSocket(
        _ request: TransportRequest, configuration: WebSocketConfiguration
    ) async throws -> any WebSocketConnection {
        try await NIOWebSocketConnector(
            request: request, configuration: configuration, group: group, baseTLS: self.configuration.baseTLS,
            dialOptions: self.configuration.dialOptions
        ).connect()
    }
}

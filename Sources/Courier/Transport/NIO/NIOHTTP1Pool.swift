import Foundation
import NIOCore
import NIOHTTPCompression
import NIOPosix

/// ``NIOTransport``'s own connections for collected exchanges: a pool per origin, plain `http` or `https` (TLS with
/// the request's security policy, ALPN choosing HTTP/2 or HTTP/1.1), with no state machine beyond what an exchange
/// on a keep-alive connection or an HTTP/2 stream needs.
///
/// AsyncHTTPClient spends more of each small exchange in its own bookkeeping (its request, task and pool state
/// machines, logging and tracing hooks, a future per step) than in NIO's parsing and the socket; this pool does the
/// same job in a handler and a lock, which is what lets Courier be faster than AsyncHTTPClient itself. Everything it
/// does not cover (streamed bodies, proxies) stays on AsyncHTTPClient.
///
/// Its rules are a plain value, ``NIOHTTP1PoolRules``, behind one lock; the pool carries out their decisions.
/// Invariant: every exchange handed to the pool is finished exactly once (its response, an error, a cancellation,
/// or the pool's shutdown).
final class NIOHTTP1Pool: Sendable {
    private typealias Rules = NIOHTTP1PoolRules<NIOHTTP1Connection, NIOHTTP1Exchange, NIOHTTP1Target.Origin>

    private struct State {
        var rules: Rules
        var sweep: RepeatedTask?
    }

    private let state: Locked<State>
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let decompressionLimit: NIOHTTPDecompression.DecompressionLimit?
    private let dialOptions: NIODialOptions

    init(
        group: any EventLoopGroup, connectTimeout: TimeAmount, idleTimeout: TimeAmount, maximumPerOrigin: Int,
        dialOptions: NIODialOptions = NIODialOptions(), decompressionLimit: NIOHTTPDecompression.DecompressionLimit?
    ) {
        self.group = group
        self.dialOptions = dialOptions
        self.connectTimeout = connectTimeout
        self.idleTimeout = idleTimeout
        state = Locked(State(rules: Rules(maximumPerOrigin: maximumPerOrigin, idleTimeout: idleTimeout)))
        self.decompressionLimit = decompressionLimit
    }

    deinit {
        // A transport released without `shutdown()`: its connections would otherwise stay open with nobody to close
        // them (the sweep holds the pool weakly).
        let (connections, sweep) = state.withLock { ($0.rules.connections, $0.sweep) }
        sweep?.cancel()
        for connection in connections { connection.close() }
    }

    /// Runs `exchange` against `origin`: on an idle connection (one on `loop` preferred), on a new one made on
    /// `loop`, or after one of the origin's connections comes free.
    func execute(_ exchange: NIOHTTP1Exchange, origin key: NIOHTTP1Target.Origin, preferring loop: any EventLoop) {
        let now = NIODeadline.now()
        let negotiates = key.tls?.offersHTTP2 ?? false
        let (step, stale) = state.withLock { state in
            // Connections idle past the timeout are closed rather than used (the sweep closes the rest).
            state.rules.execute(exchange, origin: key, now: now, negotiates: negotiates) {
                $0.channel.eventLoop === loop
            }
        }
        for connection in stale { connection.close() }
        perform(step, origin: key, loop: loop)
    }

    private func perform(_ step: Rules.Step, origin: NIOHTTP1Target.Origin, loop: any EventLoop) {
        switch step {
        case .run(let connection, let exchange):
            run(exchange, on: connection)
        case .connect(let exchange):
            connect(for: exchange, origin: origin, on: loop)
        case .fail(let exchange):
            exchange.finish(.failure(ChannelError.ioOnClosedChannel), sawHead: false)
        case .wait:
            break
        }
    }

    /// Runs `exchange` on `connection`; over HTTP/2, the end of its stream frees its place.
    private func run(_ exchange: NIOHTTP1Exchange, on connection: NIOHTTP1Connection) {
        guard connection.streams != nil else { return connection.run(exchange) }
        connection.run(exchange) { [weak self] in self?.streamEnded(on: connection) }
    }

    private func connect(for exchange: NIOHTTP1Exchange, origin: NIOHTTP1Target.Origin, on loop: any EventLoop) {
        let decompressionLimit = decompressionLimit
        let connectStart = Date()
        let bootstrap: ClientBootstrap
        do {
            bootstrap = try dialOptions.apply(to: ClientBootstrap(group: loop))
        } catch {
            connectionFailed(origin: origin)
            return exchange.finish(.failure(error), sawHead: false)
        }
        let timeout = connectTimeout
        let target = dialOptions.target(host: origin.host, port: origin.port)
        let handshake = Locked<EventLoopFuture<NIOTLSNegotiation.Negotiated>?>(nil)
        let evaluation = Locked<TrustEvaluation?>(nil)
        // Made inside the handshake, where an HTTP/2 pipeline is set up; taken once the connection is ready.
        let http2 = Locked<NIOHTTP2Streams?>(nil)
        // When TCP was connected: the TLS handshake begins then.
        let secureStart = Locked<Date?>(nil)
        let connecting =
            bootstrap
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let tls = origin.tls else {
                        return try NIOHTTP1Connection.configure(channel, decompressionLimit: decompressionLimit)
                    }
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(
                        tls.handler(host: origin.host, eventLoop: channel.eventLoop) { found in
                            evaluation.withLock { $0 = found }
                        })
                    let negotiated = channel.eventLoop.makePromise(of: NIOTLSNegotiation.Negotiated.self)
                    handshake.withLock { $0 = negotiated.futureResult }
                    try pipeline.addHandler(
                        NIOTLSNegotiation(promise: negotiated, timeout: timeout) { chosen, pipeline in
                            switch chosen {
                            case .http1:
                                try NIOHTTP1Connection.configure(pipeline, decompressionLimit: decompressionLimit)
                            case .http2:
                                let facts = NIOConnectionFacts(
                                    isReused: false, connectStart: connectStart,
                                    secureConnectionStart: secureStart.withLock { $0 }, ready: Date(),
                                    tlsVersion: NIOConnectionReporter.tlsVersion(of: pipeline), protocolName: "h2",
                                    remoteAddress: NIOConnectionReporter.remoteAddress(of: channel))
                                let streams = try NIOHTTP2Streams.configure(
                                    pipeline, channel: channel, decompressionLimit: decompressionLimit, facts: facts)
                                http2.withLock { $0 = streams }
                            }
                        })
                }
            }
            .connect(host: target.host, port: target.port)
        connecting.whenComplete { result in
            switch result {
            case .success(let channel):
                guard let negotiating = handshake.withLock({ $0 }) else {
                    return self.opened(
                        channel, for: exchange, origin: origin, connectStart: connectStart, secureStart: nil,
                        http2: nil)
                }
                secureStart.withLock { $0 = Date() }
                negotiating.whenComplete { negotiated in
                    switch negotiated {
                    case .success:
                        self.opened(
                            channel, for: exchange, origin: origin, connectStart: connectStart,
                            secureStart: secureStart.withLock { $0 }, http2: http2.withLock { $0 })
                    case .failure(let error):
                        channel.close(promise: nil)
                        self.connectionFailed(origin: origin)
                        // A refusal by the policy reads as one, whatever NIOSSL made of it.
                        if let refused = evaluation.withLock({ $0 }), !refused.isTrusted {
                            return exchange.finish(
                                .failure(
                                    CourierError.serverTrustEvaluationFailed(
                                        host: origin.host, reason: refused.reason)), sawHead: false)
                        }
                        exchange.finish(.failure(error), sawHead: false)
                    }
                }
            case .failure(let error):
                self.connectionFailed(origin: origin)
                exchange.finish(.failure(error), sawHead: false)
            }
        }
    }

    /// A new connection is ready (TCP, and over TLS the handshake done and the pipeline set up for its protocol,
    /// `http2` when it chose HTTP/2): the pool hears of it, and it runs `exchange` and whatever the pool's rules hand
    /// it. Called on its loop.
    private func opened(
        _ channel: any Channel, for exchange: NIOHTTP1Exchange, origin: NIOHTTP1Target.Origin, connectStart: Date,
        secureStart: Date?, http2: NIOHTTP2Streams?
    ) {
        let connection: NIOHTTP1Connection
        do {
            if let http2 {
                connection = NIOHTTP1Connection(channel: channel, origin: origin, streams: http2)
            } else {
                connection = try NIOHTTP1Connection(
                    channel: channel, origin: origin, connectStart: connectStart, secureStart: secureStart)
            }
        } catch {
            channel.close(promise: nil)
            connectionFailed(origin: origin)
            return exchange.finish(.failure(error), sawHead: false)
        }
        let streams = connection.streams
        // Until the server's settings say otherwise, the limit RFC 9113 recommends at least (§6.5.2).
        let streamLimit = streams.map { $0.streamLimit ?? 100 }
        let opened = state.withLock { $0.rules.opened(connection, origin: origin, streamLimit: streamLimit) }
        if let streams {
            streams.observe(
                streamLimit: { [weak self] limit in self?.streamLimitChanged(connection, to: limit) },
                goAway: { [weak self] in self?.stopsTakingStreams(connection) },
                closed: { [weak self] in self?.remove(connection) })
            if !channel.isActive { remove(connection) }
        } else {
            connection.observe(
                reusable: { [weak self] in self?.release(connection) },
                closed: { [weak self] in self?.remove(connection) })
        }
        guard opened.isOpen else {
            connection.close()
            return exchange.finish(.failure(ChannelError.ioOnClosedChannel), sawHead: false)
        }
        run(exchange, on: connection)
        for next in opened.run { run(next, on: connection) }
        for next in opened.connect { connect(for: next, origin: origin, on: group.next()) }
    }

    /// A stream of an HTTP/2 connection ended: the first waiter takes its place.
    private func streamEnded(on connection: NIOHTTP1Connection) {
        let now = NIODeadline.now()
        let release = state.withLock { state in
            let release = state.rules.streamEnded(on: connection, origin: connection.origin, now: now)
            if case .idle(startSweep: true) = release { startSweep(&state) }
            return release
        }
        if case .run(let next) = release { run(next, on: connection) }
    }

    /// The server of an HTTP/2 connection changed how many streams it allows at once.
    private func streamLimitChanged(_ connection: NIOHTTP1Connection, to limit: Int) {
        let run = state.withLock { $0.rules.streamLimitChanged(connection, origin: connection.origin, to: limit) }
        for next in run { self.run(next, on: connection) }
    }

    /// The server of an HTTP/2 connection sent `GOAWAY`: new exchanges go to a new connection.
    private func stopsTakingStreams(_ connection: NIOHTTP1Connection) {
        let next = state.withLock { $0.rules.stopsTakingStreams(connection, origin: connection.origin) }
        if let next { connect(for: next, origin: connection.origin, on: group.next()) }
    }

    /// A connection could not be made: the first waiter, if any, gets a try of its own.
    private func connectionFailed(origin: NIOHTTP1Target.Origin) {
        let next = state.withLock { $0.rules.connectionGone(from: origin, connection: nil) }
        if let next { connect(for: next, origin: origin, on: group.next()) }
    }

    /// A connection finished its exchange and may take another: the first waiter's, or it waits idle.
    private func release(_ connection: NIOHTTP1Connection) {
        let now = NIODeadline.now()
        let release = state.withLock { state in
            let release = state.rules.release(connection, origin: connection.origin, now: now)
            if case .idle(startSweep: true) = release { startSweep(&state) }
            return release
        }
        switch release {
        case .run(let next): run(next, on: connection)
        case .idle: break
        case .close: connection.close()
        }
    }

    /// A connection closed: the first waiter, if any, gets a new one.
    private func remove(_ connection: NIOHTTP1Connection) {
        let next = state.withLock { $0.rules.connectionGone(from: connection.origin, connection: connection) }
        if let next { connect(for: next, origin: connection.origin, on: connection.channel.eventLoop) }
    }

    /// Closes idle connections past the timeout now and then (those asked for are checked when they are taken).
    private func startSweep(_ state: inout State) {
        let interval = TimeAmount.nanoseconds(max(idleTimeout.nanoseconds / 2, 1_000_000_000))
        state.sweep = group.next().scheduleRepeatedTask(initialDelay: interval, delay: interval) { [weak self] _ in
            self?.closeIdle(olderThan: NIODeadline.now() - (self?.idleTimeout ?? .zero))
        }
    }

    private func closeIdle(olderThan limit: NIODeadline) {
        let expired = state.withLock { $0.rules.expireIdle(olderThan: limit) }
        for connection in expired { connection.close() }
    }

    /// Closes every connection (an exchange in flight fails) and fails every waiting exchange; the pool takes no
    /// more.
    func shutdown() async {
        let (connections, waiting, sweep) = state.withLock { state in
            defer { state.sweep = nil }
            let (connections, waiting) = state.rules.shutdown()
            return (connections, waiting, state.sweep)
        }
        sweep?.cancel()
        for exchange in waiting {
            exchange.finish(.failure(ChannelError.ioOnClosedChannel), sawHead: false)
        }
        for connection in connections {
            try? await connection.channel.close()
        }
    }
}

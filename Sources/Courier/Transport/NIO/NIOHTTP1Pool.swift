import Foundation
import NIOCore
import NIOHTTPCompression
import NIOPosix

/// ``NIOTransport``'s own HTTP/1.1 connections for collected exchanges of plain `http` requests: a pool per origin,
/// with no state machine beyond what one exchange at a time on a keep-alive connection needs.
///
/// AsyncHTTPClient spends more of each small exchange in its own bookkeeping (its request, task and pool state
/// machines, logging and tracing hooks, a future per step) than in NIO's parsing and the socket; this pool does the
/// same job in a handler and a lock, which is what lets Courier be faster than AsyncHTTPClient itself. Everything it
/// does not cover (TLS, streamed bodies, HTTP/2) stays on AsyncHTTPClient.
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
        let (step, stale) = state.withLock { state in
            // Connections idle past the timeout are closed rather than used (the sweep closes the rest).
            state.rules.execute(exchange, origin: key, now: now) { $0.channel.eventLoop === loop }
        }
        for connection in stale { connection.close() }
        perform(step, origin: key, loop: loop)
    }

    private func perform(_ step: Rules.Step, origin: NIOHTTP1Target.Origin, loop: any EventLoop) {
        switch step {
        case .run(let connection, let exchange):
            connection.run(exchange)
        case .connect(let exchange):
            connect(for: exchange, origin: origin, on: loop)
        case .fail(let exchange):
            exchange.finish(.failure(ChannelError.ioOnClosedChannel), sawHead: false)
        case .wait:
            break
        }
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
        let connecting =
            bootstrap
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOHTTP1Connection.configure(channel, decompressionLimit: decompressionLimit)
                }
            }
            .connect(host: dialOptions.address(for: origin.host), port: origin.port)
        connecting.whenComplete { result in
            switch result {
            case .success(let channel):
                do {
                    let connection = try NIOHTTP1Connection(
                        channel: channel, origin: origin, connectStart: connectStart)
                    let isOpen = self.state.withLock { $0.rules.opened(connection, origin: origin) }
                    connection.observe(
                        reusable: { [weak self] in self?.release(connection) },
                        closed: { [weak self] in self?.remove(connection) })
                    guard isOpen else {
                        connection.close()
                        return exchange.finish(.failure(ChannelError.ioOnClosedChannel), sawHead: false)
                    }
                    connection.run(exchange)
                } catch {
                    channel.close(promise: nil)
                    self.connectionFailed(origin: origin)
                    exchange.finish(.failure(error), sawHead: false)
                }
            case .failure(let error):
                self.connectionFailed(origin: origin)
                exchange.finish(.failure(error), sawHead: false)
            }
        }
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
        case .run(let next): connection.run(next)
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

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
/// Invariants: at most ``maximumPerOrigin`` connections per origin are open or opening; an exchange waits in its
/// origin's queue (first in, first out) only while that many are; every exchange handed to the pool is finished
/// exactly once (its response, an error, a cancellation, or the pool's shutdown).
final class NIOHTTP1Pool: Sendable {
    private struct Idle {
        let connection: NIOHTTP1Connection
        let since: NIODeadline
    }

    private struct Origin {
        var idle: [Idle] = []
        /// Connections open or being opened.
        var open = 0
        /// The open connections, idle or busy, for ``NIOHTTP1Pool/shutdown()``.
        var connections: [ObjectIdentifier: NIOHTTP1Connection] = [:]
        /// Exchanges waiting for a connection, oldest first; a cancelled one is skipped when its turn comes.
        var waiting: [NIOHTTP1Exchange] = []

        /// The oldest waiting exchange that has not been cancelled meanwhile; cancelled ones are dropped.
        mutating func nextWaiting() -> NIOHTTP1Exchange? {
            while !waiting.isEmpty {
                let exchange = waiting.removeFirst()
                if !exchange.isFinished { return exchange }
            }
            return nil
        }
    }

    private struct State {
        var origins: [NIOHTTP1Target.Origin: Origin] = [:]
        var isShutDown = false
        var sweep: RepeatedTask?

        /// One of `key`'s connections, open or being opened, is gone: it no longer counts, and the first waiter, if
        /// any, is returned to open one of its own (and counts as opening it). An origin with nothing left is
        /// forgotten.
        mutating func connectionGone(
            from key: NIOHTTP1Target.Origin, connection: NIOHTTP1Connection?
        ) -> NIOHTTP1Exchange? {
            guard var origin = origins[key] else { return nil }
            if let connection {
                origin.idle.removeAll { $0.connection === connection }
                origin.connections[ObjectIdentifier(connection)] = nil
            }
            origin.open -= 1
            var next: NIOHTTP1Exchange?
            if !isShutDown, let waiter = origin.nextWaiting() {
                origin.open += 1
                next = waiter
            }
            origins[key] = origin.open == 0 && origin.waiting.isEmpty ? nil : origin
            return next
        }
    }

    /// What to do, decided under the lock and done outside it.
    private enum Step {
        case run(NIOHTTP1Connection, NIOHTTP1Exchange)
        case connect(NIOHTTP1Exchange)
        case fail(NIOHTTP1Exchange, any Error)
        case none
    }

    private let state = Locked(State())
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private let maximumPerOrigin: Int
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
        self.maximumPerOrigin = max(1, maximumPerOrigin)
        self.decompressionLimit = decompressionLimit
    }

    deinit {
        // A transport released without `shutdown()`: its connections would otherwise stay open with nobody to close
        // them (the sweep holds the pool weakly).
        let (connections, sweep) = state.withLock { state in
            (state.origins.values.flatMap(\.connections.values), state.sweep)
        }
        sweep?.cancel()
        for connection in connections { connection.close() }
    }

    /// Runs `exchange` against `origin`: on an idle connection (one on `loop` preferred), on a new one made on
    /// `loop`, or after one of the origin's connections comes free.
    func execute(_ exchange: NIOHTTP1Exchange, origin key: NIOHTTP1Target.Origin, preferring loop: any EventLoop) {
        let now = NIODeadline.now()
        var stale: [NIOHTTP1Connection] = []
        let step = state.withLock { state -> Step in
            guard !state.isShutDown else { return .fail(exchange, ChannelError.ioOnClosedChannel) }
            var origin = state.origins[key, default: Origin()]
            defer { state.origins[key] = origin }
            // Connections idle past the timeout are closed rather than used (the sweep closes the rest).
            while let last = origin.idle.last, now - last.since > idleTimeout {
                stale.append(origin.idle.removeLast().connection)
            }
            if !origin.idle.isEmpty {
                let index = origin.idle.lastIndex { $0.connection.channel.eventLoop === loop } ?? origin.idle.count - 1
                return .run(origin.idle.remove(at: index).connection, exchange)
            }
            if origin.open < maximumPerOrigin {
                origin.open += 1
                return .connect(exchange)
            }
            origin.waiting.append(exchange)
            return .none
        }
        for connection in stale { connection.close() }
        perform(step, origin: key, loop: loop)
    }

    private func perform(_ step: Step, origin: NIOHTTP1Target.Origin, loop: any EventLoop) {
        switch step {
        case .run(let connection, let exchange):
            connection.run(exchange)
        case .connect(let exchange):
            connect(for: exchange, origin: origin, on: loop)
        case .fail(let exchange, let error):
            exchange.finish(.failure(error), sawHead: false)
        case .none:
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
                    let isShutDown = self.state.withLock { state in
                        state.origins[origin]?.connections[ObjectIdentifier(connection)] = connection
                        return state.isShutDown
                    }
                    connection.observe(
                        reusable: { [weak self] in self?.release(connection) },
                        closed: { [weak self] in self?.remove(connection) })
                    guard !isShutDown else {
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
        let next = state.withLock { $0.connectionGone(from: origin, connection: nil) }
        if let next { connect(for: next, origin: origin, on: group.next()) }
    }

    /// A connection finished its exchange and may take another: the first waiter's, or it waits idle.
    private func release(_ connection: NIOHTTP1Connection) {
        let now = NIODeadline.now()
        let next = state.withLock { state -> NIOHTTP1Exchange? in
            guard !state.isShutDown else { return nil }
            if let next = state.origins[connection.origin]?.nextWaiting() { return next }
            state.origins[connection.origin]?.idle.append(Idle(connection: connection, since: now))
            if state.sweep == nil { startSweep(&state) }
            return nil
        }
        if let next {
            connection.run(next)
        } else if state.withLock({ $0.isShutDown }) {
            connection.close()
        }
    }

    /// A connection closed: the first waiter, if any, gets a new one.
    private func remove(_ connection: NIOHTTP1Connection) {
        let next = state.withLock { $0.connectionGone(from: connection.origin, connection: connection) }
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
        let expired = state.withLock { state -> [NIOHTTP1Connection] in
            var expired: [NIOHTTP1Connection] = []
            for key in state.origins.keys {
                state.origins[key]?.idle.removeAll { idle in
                    guard idle.since < limit else { return false }
                    expired.append(idle.connection)
                    return true
                }
            }
            return expired
        }
        for connection in expired { connection.close() }
    }

    /// Closes every connection (an exchange in flight fails) and fails every waiting exchange; the pool takes no
    /// more.
    func shutdown() async {
        let (connections, waiting, sweep) = state.withLock { state in
            state.isShutDown = true
            defer {
                state.origins = [:]
                state.sweep = nil
            }
            return (
                state.origins.values.flatMap(\.connections.values),
                state.origins.values.flatMap(\.waiting), state.sweep
            )
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

import NIOCore

/// What the pool's rules need of an exchange: whether it has finished (a cancelled waiter is skipped).
protocol NIOHTTP1PoolWaiter {
    var isFinished: Bool { get }
}

/// ``NIOHTTP1Pool``'s rules as a plain value: which connection an exchange runs on, when a connection is opened,
/// who waits, and what a freed, failed, idle or shut-down connection leads to. The pool keeps it behind its lock and
/// carries out what each call returns outside it; tests drive it with plain objects, no sockets
/// (`NIOHTTP1PoolRulesTests`).
///
/// An origin speaks HTTP/1.1 (one exchange per connection at a time, up to `maximumPerOrigin` connections) or, once
/// a TLS handshake has negotiated it, HTTP/2 (every exchange on one multiplexed connection, up to its stream
/// limit). An origin that may negotiate HTTP/2 opens one connection until the first handshake has told which, so it
/// never opens more than the one connection HTTP/2 needs.
///
/// Invariants: at most `maximumPerOrigin` connections per origin are open or opening, and only one while an
/// origin's protocol is being negotiated; at most `streamLimit` exchanges run at once on a multiplexed connection; an
/// exchange waits in its origin's queue (first in, first out) only while no connection can take it; a waiter is
/// handed out at most once; after ``shutdown()`` nothing runs, opens or waits.
struct NIOHTTP1PoolRules<Connection: AnyObject, Exchange: NIOHTTP1PoolWaiter, Key: Hashable> {
    private struct Idle {
        let connection: Connection
        let since: NIODeadline
    }

    private struct Origin {
        var idle: [Idle] = []
        /// Connections open or being opened.
        var open = 0
        /// The open connections, idle or busy, for ``NIOHTTP1PoolRules/shutdown()``.
        var connections: [ObjectIdentifier: Connection] = [:]
        /// Exchanges waiting for a connection, oldest first; a cancelled one is skipped when its turn comes. A ring
        /// buffer: with thousands waiting, adding one or taking the first costs the same as with one.
        var waiting = CircularBuffer<Exchange>()
        /// The origin's HTTP/2 connection, while it takes new streams.
        var multiplexed: Connection?
        /// Exchanges running on ``multiplexed``, and how many it may run at once.
        var streams = 0
        var streamLimit = 0
        /// When ``multiplexed`` last ran out of streams, for the idle timeout.
        var multiplexedIdleSince: NIODeadline?
        /// The first connection is opening and its handshake will tell whether the origin speaks HTTP/2.
        var negotiating = false
        /// A handshake has shown that the origin speaks HTTP/1.1: no more negotiating.
        var speaksHTTP1 = false
        /// The origin's connections negotiate their protocol (TLS that offers HTTP/2).
        var negotiates = false

        /// Whether a connection opened now negotiates the origin's protocol, so nothing else opens meanwhile.
        var opensNegotiating: Bool { negotiates && !speaksHTTP1 }

        /// The waiters ``multiplexed`` can take now, each counted as one of its streams.
        mutating func takeStreams() -> [Exchange] {
            var taken: [Exchange] = []
            while streams < streamLimit, let next = nextWaiting() {
                streams += 1
                taken.append(next)
            }
            return taken
        }

        /// No new exchange goes to ``multiplexed`` (closed, expired, or its server sent `GOAWAY`).
        mutating func dropMultiplexed() {
            multiplexed = nil
            multiplexedIdleSince = nil
        }

        /// The oldest waiting exchange that has not been cancelled meanwhile; cancelled ones are dropped.
        mutating func nextWaiting() -> Exchange? {
            while let exchange = waiting.popFirst() {
                if !exchange.isFinished { return exchange }
            }
            return nil
        }
    }

    /// What ``execute(_:origin:now:preferring:)`` decided.
    enum Step {
        /// Run the exchange on this idle connection.
        case run(Connection, Exchange)
        /// Open a connection for the exchange (it already counts as opening).
        case connect(Exchange)
        /// The pool is shut down: fail the exchange.
        case fail(Exchange)
        /// The exchange waits for one of the origin's connections.
        case wait
    }

    /// What ``opened(_:origin:streamLimit:)`` decided.
    struct Opened {
        /// `false` when the pool was shut down meanwhile: close the connection, fail its exchange.
        var isOpen: Bool
        /// Waiters to run on the new connection as well (HTTP/2: new streams).
        var run: [Exchange] = []
        /// Waiters to open connections of their own (each counts as opening): the handshake said HTTP/1.1.
        var connect: [Exchange] = []
    }

    /// What ``release(_:origin:now:)`` decided for a connection that may take another exchange.
    enum Release {
        /// Run the first waiter on it.
        case run(Exchange)
        /// It waits idle; `startSweep` when no sweep is running yet.
        case idle(startSweep: Bool)
        /// The pool is shut down: close it.
        case close
    }

    let maximumPerOrigin: Int
    let idleTimeout: TimeAmount
    private var origins: [Key: Origin] = [:]
    private(set) var isShutDown = false
    private var sweeping = false

    init(maximumPerOrigin: Int, idleTimeout: TimeAmount) {
        self.maximumPerOrigin = max(1, maximumPerOrigin)
        self.idleTimeout = idleTimeout
    }

    /// Every connection open now, idle or busy.
    var connections: [Connection] { origins.values.flatMap(\.connections.values) }

    /// The most streams run at once on one HTTP/2 connection, whatever its server allows: each is a channel with
    /// its own buffers, and a server that allows millions must not make a client with many waiting open them all.
    static var maximumStreamLimit: Int { 256 }

    /// An exchange for `key`: a stream of its HTTP/2 connection, an idle connection (the last one `preferring`
    /// accepts, else the most recent), a new connection while fewer than the maximum are open (one only, while
    /// `negotiates` and the origin's protocol is not known yet), or a place in the queue. Idle connections past the
    /// timeout are taken out and returned as `stale`, to be closed.
    mutating func execute(
        _ exchange: Exchange, origin key: Key, now: NIODeadline, negotiates: Bool = false,
        preferring: (Connection) -> Bool
    ) -> (step: Step, stale: [Connection]) {
        guard !isShutDown else { return (.fail(exchange), []) }
        // Changed in place: a copy taken out of the dictionary would make the next append copy the whole queue.
        let (idleTimeout, maximum) = (idleTimeout, maximumPerOrigin)
        return Self.execute(
            exchange, in: &origins[key, default: Origin()], now: now, idleTimeout: idleTimeout, maximum: maximum,
            negotiates: negotiates, preferring: preferring)
    }

    private static func execute(
        _ exchange: Exchange, in origin: inout Origin, now: NIODeadline, idleTimeout: TimeAmount, maximum: Int,
        negotiates: Bool, preferring: (Connection) -> Bool
    ) -> (step: Step, stale: [Connection]) {
        origin.negotiates = negotiates
        var stale: [Connection] = []
        if let multiplexed = origin.multiplexed, let since = origin.multiplexedIdleSince, now - since > idleTimeout {
            origin.dropMultiplexed()  // closed as stale; its close is reported as for any connection
            stale.append(multiplexed)
        }
        if let multiplexed = origin.multiplexed {
            if origin.streams < origin.streamLimit {
                origin.streams += 1
                origin.multiplexedIdleSince = nil
                return (.run(multiplexed, exchange), stale)
            }
            origin.waiting.append(exchange)
            return (.wait, stale)
        }
        if origin.negotiating {
            origin.waiting.append(exchange)
            return (.wait, stale)
        }
        while let last = origin.idle.last, now - last.since > idleTimeout {
            stale.append(origin.idle.removeLast().connection)
        }
        if !origin.idle.isEmpty {
            let index = origin.idle.lastIndex { preferring($0.connection) } ?? origin.idle.count - 1
            return (.run(origin.idle.remove(at: index).connection, exchange), stale)
        }
        if origin.open < maximum {
            origin.negotiating = origin.opensNegotiating
            origin.open += 1
            return (.connect(exchange), stale)
        }
        origin.waiting.append(exchange)
        return (.wait, stale)
    }

    /// A connection opened for `key`; `false` when the pool was shut down meanwhile (close it, fail its exchange).
    mutating func opened(_ connection: Connection, origin key: Key) -> Bool {
        opened(connection, origin: key, streamLimit: nil).isOpen
    }

    /// A connection opened for `key`, running the exchange it was opened for: an HTTP/2 one (`streamLimit`, the
    /// streams its server allows at once) takes waiters as streams; an HTTP/1.1 one that ends a negotiation lets
    /// waiters open connections of their own.
    mutating func opened(_ connection: Connection, origin key: Key, streamLimit: Int?) -> Opened {
        guard !isShutDown, var origin = origins.removeValue(forKey: key) else { return Opened(isOpen: !isShutDown) }
        defer { origins[key] = origin }
        origin.connections[ObjectIdentifier(connection)] = connection
        origin.negotiating = false
        var opened = Opened(isOpen: true)
        if let streamLimit {
            origin.multiplexed = connection
            origin.streamLimit = Self.streamLimit(streamLimit)
            origin.streams = 1
            origin.multiplexedIdleSince = nil
            opened.run = origin.takeStreams()
        } else {
            origin.speaksHTTP1 = true
            while origin.open < maximumPerOrigin, let next = origin.nextWaiting() {
                origin.open += 1
                opened.connect.append(next)
            }
        }
        return opened
    }

    /// `key`'s HTTP/2 `connection` now allows `streamLimit` streams at once (its server's settings): waiters it can
    /// take now are returned, to run on it.
    mutating func streamLimitChanged(_ connection: Connection, origin key: Key, to streamLimit: Int) -> [Exchange] {
        guard !isShutDown, var origin = origins.removeValue(forKey: key) else { return [] }
        defer { origins[key] = origin }
        guard origin.multiplexed === connection else { return [] }
        origin.streamLimit = Self.streamLimit(streamLimit)
        return origin.takeStreams()
    }

    /// A server's stream limit as the rules keep it: at least 1, at most ``maximumStreamLimit``.
    private static func streamLimit(_ limit: Int) -> Int {
        min(max(limit, 1), maximumStreamLimit)
    }

    /// A stream of `key`'s HTTP/2 `connection` ended: the first waiter takes its place, or the connection counts as
    /// idle since `now` once no stream is left.
    mutating func streamEnded(on connection: Connection, origin key: Key, now: NIODeadline) -> Release {
        guard !isShutDown else { return .close }
        guard var origin = origins.removeValue(forKey: key) else { return .idle(startSweep: false) }
        defer { origins[key] = origin }
        guard origin.multiplexed === connection else { return .idle(startSweep: false) }
        if let next = origin.nextWaiting() { return .run(next) }
        origin.streams -= 1
        guard origin.streams == 0 else { return .idle(startSweep: false) }
        origin.multiplexedIdleSince = now
        defer { sweeping = true }
        return .idle(startSweep: !sweeping)
    }

    /// `key`'s HTTP/2 `connection` takes no new streams (its server sent `GOAWAY`); those running finish on it. The
    /// first waiter, if any, is returned to open a new connection (and counts as opening it).
    mutating func stopsTakingStreams(_ connection: Connection, origin key: Key) -> Exchange? {
        guard !isShutDown, var origin = origins.removeValue(forKey: key) else { return nil }
        defer { origins[key] = origin }
        guard origin.multiplexed === connection else { return nil }
        origin.dropMultiplexed()
        guard origin.open < maximumPerOrigin, let next = origin.nextWaiting() else { return nil }
        origin.open += 1
        origin.negotiating = origin.opensNegotiating
        return next
    }

    /// A connection finished its exchange and may take another: the first waiter's, or it waits idle since `now`.
    mutating func release(_ connection: Connection, origin key: Key, now: NIODeadline) -> Release {
        guard !isShutDown else { return .close }
        if let next = origins[key]?.nextWaiting() { return .run(next) }
        origins[key]?.idle.append(Idle(connection: connection, since: now))
        defer { sweeping = true }
        return .idle(startSweep: !sweeping)
    }

    /// One of `key`'s connections, open or being opened (`connection` is `nil` when it never opened), is gone: it no
    /// longer counts, and the first waiter, if any, is returned to open one of its own (and counts as opening it). An
    /// origin with nothing left is forgotten.
    mutating func connectionGone(from key: Key, connection: Connection?) -> Exchange? {
        guard var origin = origins.removeValue(forKey: key) else { return nil }  // moved out, so not copied
        if let connection {
            guard origin.connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else {
                origins[key] = origin  // reported already
                return nil
            }
            origin.idle.removeAll { $0.connection === connection }
            if origin.multiplexed === connection { origin.dropMultiplexed() }
        } else {
            origin.negotiating = false  // the connection that was to tell never opened
        }
        origin.open -= 1
        var next: Exchange?
        if !isShutDown, origin.multiplexed == nil, !origin.negotiating, let waiter = origin.nextWaiting() {
            origin.open += 1
            origin.negotiating = origin.opensNegotiating
            next = waiter
        }
        origins[key] = origin.open == 0 && origin.waiting.isEmpty ? nil : origin
        return next
    }

    /// Takes out the connections idle since before `limit`, to be closed.
    mutating func expireIdle(olderThan limit: NIODeadline) -> [Connection] {
        var expired: [Connection] = []
        for key in origins.keys {
            origins[key]?.idle.removeAll { idle in
                guard idle.since < limit else { return false }
                expired.append(idle.connection)
                return true
            }
            if let since = origins[key]?.multiplexedIdleSince, since < limit,
                let multiplexed = origins[key]?.multiplexed
            {
                origins[key]?.dropMultiplexed()
                expired.append(multiplexed)
            }
        }
        return expired
    }

    /// Shuts the pool down: returns every connection (to close) and every waiting exchange (to fail), and forgets
    /// them.
    mutating func shutdown() -> (connections: [Connection], waiting: [Exchange]) {
        isShutDown = true
        defer { origins = [:] }
        return (connections, origins.values.flatMap { Array($0.waiting) })
    }
}

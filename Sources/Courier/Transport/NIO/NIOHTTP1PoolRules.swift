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
/// Invariants: at most `maximumPerOrigin` connections per origin are open or opening; an exchange waits in its
/// origin's queue (first in, first out) only while that many are; a waiter is handed out at most once; after
/// ``shutdown()`` nothing runs, opens or waits.
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

    /// An exchange for `key`: an idle connection (the last one `preferring` accepts, else the most recent), a new
    /// connection while fewer than the maximum are open, or a place in the queue. Idle connections past the timeout
    /// are taken out and returned as `stale`, to be closed.
    mutating func execute(
        _ exchange: Exchange, origin key: Key, now: NIODeadline, preferring: (Connection) -> Bool
    ) -> (step: Step, stale: [Connection]) {
        guard !isShutDown else { return (.fail(exchange), []) }
        // Changed in place: a copy taken out of the dictionary would make the next append copy the whole queue.
        let (idleTimeout, maximum) = (idleTimeout, maximumPerOrigin)
        return Self.execute(
            exchange, in: &origins[key, default: Origin()], now: now, idleTimeout: idleTimeout, maximum: maximum,
            preferring: preferring)
    }

    private static func execute(
        _ exchange: Exchange, in origin: inout Origin, now: NIODeadline, idleTimeout: TimeAmount, maximum: Int,
        preferring: (Connection) -> Bool
    ) -> (step: Step, stale: [Connection]) {
        var stale: [Connection] = []
        while let last = origin.idle.last, now - last.since > idleTimeout {
            stale.append(origin.idle.removeLast().connection)
        }
        if !origin.idle.isEmpty {
            let index = origin.idle.lastIndex { preferring($0.connection) } ?? origin.idle.count - 1
            return (.run(origin.idle.remove(at: index).connection, exchange), stale)
        }
        if origin.open < maximum {
            origin.open += 1
            return (.connect(exchange), stale)
        }
        origin.waiting.append(exchange)
        return (.wait, stale)
    }

    /// A connection opened for `key`; `false` when the pool was shut down meanwhile (close it, fail its exchange).
    mutating func opened(_ connection: Connection, origin key: Key) -> Bool {
        origins[key]?.connections[ObjectIdentifier(connection)] = connection
        return !isShutDown
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
            origin.idle.removeAll { $0.connection === connection }
            origin.connections[ObjectIdentifier(connection)] = nil
        }
        origin.open -= 1
        var next: Exchange?
        if !isShutDown, let waiter = origin.nextWaiting() {
            origin.open += 1
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

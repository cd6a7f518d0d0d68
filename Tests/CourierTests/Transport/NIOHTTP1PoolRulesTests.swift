import NIOCore
import Testing

@testable import Courier

/// ``NIOHTTP1PoolRules`` without sockets: plain objects stand for connections and exchanges, and each test drives
/// the rules as the pool would and checks what they decide.
struct NIOHTTP1PoolRulesTests {
    final class Connection {
        let loop: Int
        init(loop: Int = 0) { self.loop = loop }
    }

    final class Exchange: NIOHTTP1PoolWaiter {
        var isFinished = false
    }

    typealias Rules = NIOHTTP1PoolRules<Connection, Exchange, String>

    private let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    private func connectionOf(_ step: Rules.Step) -> Connection? {
        if case .run(let connection, _) = step { return connection }
        return nil
    }

    private func isConnect(_ step: Rules.Step) -> Bool {
        if case .connect = step { return true }
        return false
    }

    private func isWait(_ step: Rules.Step) -> Bool {
        if case .wait = step { return true }
        return false
    }

    @Test("At most maximumPerOrigin connections open per origin; the rest wait, and other origins are not held up")
    func limitPerOrigin() {
        var rules = Rules(maximumPerOrigin: 2, idleTimeout: .seconds(60))
        let steps = (0..<4).map { _ in rules.execute(Exchange(), origin: "a", now: start) { _ in true }.step }
        #expect(steps.map(isConnect) == [true, true, false, false])
        #expect(steps.map(isWait) == [false, false, true, true])
        let other = rules.execute(Exchange(), origin: "b", now: start) { _ in true }
        #expect(isConnect(other.step))
    }

    @Test(
        "Ten thousand waiters on one connection are each handed out once, in the order they came, then the queue is empty"
    )
    func manyWaitersInOrder() {
        var rules = Rules(maximumPerOrigin: 1, idleTimeout: .seconds(60))
        _ = rules.execute(Exchange(), origin: "a", now: start) { _ in true }
        let connection = Connection()
        _ = rules.opened(connection, origin: "a")
        let waiters = (0..<10_000).map { _ in Exchange() }
        for exchange in waiters {
            let queued = rules.execute(exchange, origin: "a", now: start) { _ in true }
            #expect(isWait(queued.step))
        }
        var handedOut: [Exchange] = []
        while case .run(let next) = rules.release(connection, origin: "a", now: start) {
            next.isFinished = true
            handedOut.append(next)
        }
        #expect(handedOut.count == waiters.count)
        #expect(zip(handedOut, waiters).allSatisfy { $0 === $1 })
    }

    @Test("A freed connection takes the oldest waiter first; a cancelled waiter is skipped")
    func waitersInOrder() {
        var rules = Rules(maximumPerOrigin: 1, idleTimeout: .seconds(60))
        _ = rules.execute(Exchange(), origin: "a", now: start) { _ in true }
        let connection = Connection()
        let isOpen = rules.opened(connection, origin: "a")
        #expect(isOpen)
        let (cancelled, second, third) = (Exchange(), Exchange(), Exchange())
        for exchange in [cancelled, second, third] {
            let queued = rules.execute(exchange, origin: "a", now: start) { _ in true }
            #expect(isWait(queued.step))
        }
        cancelled.isFinished = true
        guard case .run(let next) = rules.release(connection, origin: "a", now: start) else {
            Issue.record("the freed connection did not take a waiter")
            return
        }
        #expect(next === second)
        guard case .run(let after) = rules.release(connection, origin: "a", now: start) else {
            Issue.record("the freed connection did not take the next waiter")
            return
        }
        #expect(after === third)
        guard case .idle(startSweep: true) = rules.release(connection, origin: "a", now: start) else {
            Issue.record("with no waiter, the connection did not go idle and start the sweep")
            return
        }
    }

    @Test("An idle connection is reused, one on the preferred event loop first; only the first idle starts a sweep")
    func reusePrefersLoop() {
        var rules = Rules(maximumPerOrigin: 4, idleTimeout: .seconds(60))
        let (onZero, onOne) = (Connection(loop: 0), Connection(loop: 1))
        for connection in [onZero, onOne] {
            _ = rules.execute(Exchange(), origin: "a", now: start) { _ in true }
            let isOpen = rules.opened(connection, origin: "a")
            #expect(isOpen)
        }
        guard case .idle(startSweep: true) = rules.release(onZero, origin: "a", now: start),
            case .idle(startSweep: false) = rules.release(onOne, origin: "a", now: start)
        else {
            Issue.record("released connections did not go idle with one sweep")
            return
        }
        let step = rules.execute(Exchange(), origin: "a", now: start) { $0.loop == 0 }.step
        #expect(connectionOf(step) === onZero)
        let second = rules.execute(Exchange(), origin: "a", now: start) { $0.loop == 0 }
        #expect(connectionOf(second.step) === onOne)
    }

    @Test("Connections idle past the timeout are handed back as stale, not used, and the sweep expires the rest")
    func idleTimeout() {
        var rules = Rules(maximumPerOrigin: 2, idleTimeout: .seconds(5))
        let (old, fresh) = (Connection(), Connection())
        for connection in [old, fresh] {
            _ = rules.execute(Exchange(), origin: "a", now: start) { _ in true }
            let isOpen = rules.opened(connection, origin: "a")
            #expect(isOpen)
        }
        _ = rules.release(fresh, origin: "a", now: start + .seconds(4))
        _ = rules.release(old, origin: "a", now: start)
        // The most recently idle (`old`, released last) has waited 6 s: it is stale; `fresh` has waited 2 s.
        let (step, stale) = rules.execute(Exchange(), origin: "a", now: start + .seconds(6)) { _ in true }
        #expect(stale.map(ObjectIdentifier.init) == [ObjectIdentifier(old)])
        #expect(connectionOf(step) === fresh)
        _ = rules.release(fresh, origin: "a", now: start + .seconds(6))
        let notYet = rules.expireIdle(olderThan: start + .seconds(6))
        #expect(notYet.isEmpty)
        let expired = rules.expireIdle(olderThan: start + .seconds(7))
        #expect(expired.map(ObjectIdentifier.init) == [ObjectIdentifier(fresh)])
    }

    @Test("A connection that fails or closes frees its place: the first waiter opens one of its own")
    func goneConnectionHandsItsPlaceOn() {
        var rules = Rules(maximumPerOrigin: 1, idleTimeout: .seconds(60))
        _ = rules.execute(Exchange(), origin: "a", now: start) { _ in true }
        let waiter = Exchange()
        let queued = rules.execute(waiter, origin: "a", now: start) { _ in true }
        #expect(isWait(queued.step))
        let next = rules.connectionGone(from: "a", connection: nil)
        #expect(next === waiter)
        // The waiter now counts as opening: a third exchange still waits.
        let third = rules.execute(Exchange(), origin: "a", now: start) { _ in true }
        #expect(isWait(third.step))
        let connection = Connection()
        let isOpen = rules.opened(connection, origin: "a")
        #expect(isOpen)
        #expect(rules.connections.count == 1)
        let afterClose = rules.connectionGone(from: "a", connection: connection)
        #expect(afterClose != nil)
        #expect(rules.connections.isEmpty)
    }

    @Test("An origin with nothing open and nobody waiting is forgotten")
    func emptyOriginForgotten() {
        var rules = Rules(maximumPerOrigin: 1, idleTimeout: .seconds(60))
        _ = rules.execute(Exchange(), origin: "a", now: start) { _ in true }
        let first = rules.connectionGone(from: "a", connection: nil)
        #expect(first == nil)
        // Forgotten, so a second loss of the same origin changes nothing and the next exchange opens afresh.
        let again = rules.connectionGone(from: "a", connection: nil)
        #expect(again == nil)
        let other = rules.execute(Exchange(), origin: "a", now: start) { _ in true }
        #expect(isConnect(other.step))
    }

    @Test("After shutdown: every connection and waiter is handed back once, new exchanges fail, freed ones close")
    func shutdown() {
        var rules = Rules(maximumPerOrigin: 1, idleTimeout: .seconds(60))
        _ = rules.execute(Exchange(), origin: "a", now: start) { _ in true }
        let connection = Connection()
        let isOpen = rules.opened(connection, origin: "a")
        #expect(isOpen)
        let waiter = Exchange()
        _ = rules.execute(waiter, origin: "a", now: start) { _ in true }
        let (connections, waiting) = rules.shutdown()
        #expect(connections.map(ObjectIdentifier.init) == [ObjectIdentifier(connection)])
        #expect(waiting.map(ObjectIdentifier.init) == [ObjectIdentifier(waiter)])
        let secondShutdown = rules.shutdown()
        #expect(secondShutdown.connections.isEmpty)
        guard case .fail = rules.execute(Exchange(), origin: "a", now: start, preferring: { _ in true }).step,
            case .close = rules.release(connection, origin: "a", now: start)
        else {
            Issue.record("a shut-down pool ran or kept a connection")
            return
        }
        let reopened = rules.opened(Connection(), origin: "a")
        #expect(!reopened)
        let late = rules.connectionGone(from: "a", connection: connection)
        #expect(late == nil)
    }

    // MARK: Negotiated origins (TLS that offers HTTP/2)

    private func negotiated(_ rules: inout Rules, _ exchange: Exchange = Exchange(), now: NIODeadline? = nil)
        -> Rules.Step
    {
        rules.execute(exchange, origin: "h", now: now ?? start, negotiates: true) { _ in true }.step
    }

    @Test("While the first handshake of an origin that may speak HTTP/2 is under way, nothing else opens")
    func oneConnectionWhileNegotiating() {
        var rules = Rules(maximumPerOrigin: 8, idleTimeout: .seconds(60))
        let steps = (0..<4).map { _ in negotiated(&rules) }
        #expect(steps.map(isConnect) == [true, false, false, false])
        #expect(steps.map(isWait) == [false, true, true, true])
    }

    @Test("An HTTP/2 connection takes the waiters as streams up to its limit; an ended stream hands its place on")
    func http2TakesWaitersUpToItsStreamLimit() {
        var rules = Rules(maximumPerOrigin: 8, idleTimeout: .seconds(60))
        _ = negotiated(&rules)
        let waiters = (0..<3).map { _ in Exchange() }
        for waiter in waiters { _ = negotiated(&rules, waiter) }
        let connection = Connection()
        let opened = rules.opened(connection, origin: "h", streamLimit: 2)
        #expect(opened.isOpen)
        #expect(opened.run.map(ObjectIdentifier.init) == [ObjectIdentifier(waiters[0])])
        #expect(opened.connect.isEmpty)
        let queued = Exchange()
        #expect(isWait(negotiated(&rules, queued)))  // two streams run: the limit
        guard case .run(let next) = rules.streamEnded(on: connection, origin: "h", now: start) else {
            Issue.record("an ended stream did not hand its place to the first waiter")
            return
        }
        #expect(next === waiters[1])
        let more = rules.streamLimitChanged(connection, origin: "h", to: 4)
        #expect(more.map(ObjectIdentifier.init) == [ObjectIdentifier(waiters[2]), ObjectIdentifier(queued)])
        #expect(isWait(negotiated(&rules)))  // four streams run
    }

    @Test("A server that allows a million streams gets at most maximumStreamLimit at once")
    func streamLimitIsCapped() {
        var rules = Rules(maximumPerOrigin: 8, idleTimeout: .seconds(60))
        _ = negotiated(&rules)
        let connection = Connection()
        _ = rules.opened(connection, origin: "h", streamLimit: 1_000_000)
        var running = 1
        while connectionOf(negotiated(&rules)) === connection { running += 1 }
        #expect(running == Rules.maximumStreamLimit)
    }

    @Test("A handshake that chose HTTP/1.1 lets the waiters open connections of their own, up to the maximum")
    func http1HandshakeReleasesWaiters() {
        var rules = Rules(maximumPerOrigin: 3, idleTimeout: .seconds(60))
        _ = negotiated(&rules)
        let waiters = (0..<4).map { _ in Exchange() }
        for waiter in waiters { _ = negotiated(&rules, waiter) }
        let opened = rules.opened(Connection(), origin: "h", streamLimit: nil)
        #expect(opened.connect.map(ObjectIdentifier.init) == waiters.prefix(2).map(ObjectIdentifier.init))
        #expect(opened.run.isEmpty)
        // Known to speak HTTP/1.1 now: a freed place goes to the next waiter, and nothing waits for a negotiation
        // again.
        #expect(rules.connectionGone(from: "h", connection: nil) === waiters[2])
        #expect(rules.connectionGone(from: "h", connection: nil) === waiters[3])
        _ = rules.connectionGone(from: "h", connection: nil)
        #expect(isConnect(negotiated(&rules)))
        #expect(isWait(negotiated(&rules)))  // three open or opening again
    }

    @Test("GOAWAY: the connection takes no new streams, a waiter opens the next one, and its close counts once")
    func goAwayMovesOn() {
        var rules = Rules(maximumPerOrigin: 8, idleTimeout: .seconds(60))
        _ = negotiated(&rules)
        let old = Connection()
        _ = rules.opened(old, origin: "h", streamLimit: 1)
        let waiter = Exchange()
        #expect(isWait(negotiated(&rules, waiter)))
        let next = rules.stopsTakingStreams(old, origin: "h")
        #expect(next === waiter)
        #expect(isWait(negotiated(&rules)))  // negotiating again
        // The old connection's last stream ends, then it closes: neither reaches the new one's count.
        guard case .idle = rules.streamEnded(on: old, origin: "h", now: start) else {
            Issue.record("a stream of a connection that takes no new ones handed its place on")
            return
        }
        #expect(rules.connectionGone(from: "h", connection: old) == nil)
        #expect(rules.connectionGone(from: "h", connection: old) == nil)  // reported twice, counted once
        let new = Connection()
        let opened = rules.opened(new, origin: "h", streamLimit: 10)
        #expect(opened.run.count == 1)  // the exchange that waited during the negotiation
        #expect(rules.connections.map(ObjectIdentifier.init) == [ObjectIdentifier(new)])
    }

    @Test("An HTTP/2 connection without streams expires after the idle timeout, by the sweep or when next asked")
    func idleHTTP2ConnectionExpires() {
        var rules = Rules(maximumPerOrigin: 8, idleTimeout: .seconds(60))
        _ = negotiated(&rules)
        let connection = Connection()
        _ = rules.opened(connection, origin: "h", streamLimit: 10)
        guard case .idle(startSweep: true) = rules.streamEnded(on: connection, origin: "h", now: start) else {
            Issue.record("the last stream's end did not leave the connection idle with a sweep")
            return
        }
        #expect(rules.expireIdle(olderThan: start).isEmpty)
        let later = start + .seconds(61)
        let (step, stale) = rules.execute(Exchange(), origin: "h", now: later, negotiates: true) { _ in true }
        #expect(stale.map(ObjectIdentifier.init) == [ObjectIdentifier(connection)])
        #expect(isConnect(step))

        var swept = Rules(maximumPerOrigin: 8, idleTimeout: .seconds(60))
        _ = negotiated(&swept)
        _ = swept.opened(connection, origin: "h", streamLimit: 10)
        _ = swept.streamEnded(on: connection, origin: "h", now: start)
        let expired = swept.expireIdle(olderThan: start + .seconds(1))
        #expect(expired.map(ObjectIdentifier.init) == [ObjectIdentifier(connection)])
    }
}

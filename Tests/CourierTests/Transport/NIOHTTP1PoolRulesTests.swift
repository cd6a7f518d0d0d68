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
}

import Foundation

/// A session's gate in front of its transport: at most ``limit`` tasks of one origin (scheme, host and port) are
/// past it at once, and the rest wait here, first come first served, before anything of their exchange is built.
///
/// A request waiting for a connection inside the transport holds its whole exchange: the frames of the request loop
/// down to the connection pool's queue, its transport request, its pool entry, kilobytes each. Waiting here it
/// holds a queue entry and the few frames above the gate, so ten thousand requests in flight cost what the
/// transport's connections can serve plus a small sum per request. The transport says how many it can use at once
/// (``Transport/maximumExchangesPerOrigin``); a bound above its connections keeps its own queue fed, so a connection
/// that frees up finds its next request ready.
///
/// A ticket is for a task's first exchange only, and is given back as soon as that exchange's response is in (its
/// head, when the body streams): what follows (redirects, retries, challenges) may wait for other requests of the
/// same origin, a token refresh for one, and must not hold a place they need.
///
/// Invariants: for each origin, the tickets out never exceed ``limit``; a waiter is admitted only by a ticket given
/// back (its place passes to the waiter) or by an entry that found a free place, never both; each waiter is told
/// (its `Admit` called) exactly once.
final class ExchangeAdmission: Sendable {
    /// The most tickets out for one origin.
    let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Where a ticket is counted: the URL's scheme, host and port, as the transport's connections are shared.
    struct Origin: Hashable, Sendable {
        var scheme: String
        var host: String
        var port: Int

        init(_ url: URL) {
            scheme = url.scheme?.lowercased() ?? ""
            host = url.host?.lowercased() ?? ""
            port = url.port ?? (scheme == "https" || scheme == "wss" ? 443 : 80)
        }
    }

    /// What a waiter is told, exactly once: its ticket, or `nil` when it was cancelled first.
    typealias Admit = @Sendable (Ticket?) -> Void

    private struct State {
        var origins: [Origin: Line] = [:]
        /// Tickets given to waiters whose `Admit` is still to be called, and whether a thread is calling them.
        var handOvers: [HandOver] = []
        var handingOver = false
    }

    /// One origin's tickets out and the tasks waiting for one, oldest first. A class, changed in place under the
    /// lock: a copy out of the dictionary and back would copy the whole line on every change.
    private final class Line {
        var ticketsOut = 0
        var waiting: [Waiter?] = []
        /// The index of the oldest entry still in `waiting`; the slots before it are spent.
        var head = 0

        var isIdle: Bool { ticketsOut == 0 && head == waiting.count }

        func enqueue(_ waiter: Waiter) {
            if head > 64, head * 2 > waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            waiting.append(waiter)
        }

        func dequeue() -> Waiter? {
            guard head < waiting.count else { return nil }
            defer {
                waiting[head] = nil
                head += 1
            }
            return waiting[head]
        }
    }

    /// A ticket for a waiter whose `Admit` is to be called once the lock is let go.
    private struct HandOver {
        let admit: Admit
        let ticket: Ticket
    }

    /// What ``enter(_:)`` gives: a ticket at once, or a place in the line to wait in.
    enum Entry {
        case admitted(Ticket)
        case waiting(Waiter)
    }

    /// Takes a ticket for `url`'s origin when one is free, else a place in its line.
    func enter(_ url: URL) -> Entry {
        let origin = Origin(url)
        return state.withLock { state -> Entry in
            let line: Line
            if let existing = state.origins[origin] {
                line = existing
            } else {
                line = Line()
                state.origins[origin] = line
            }
            guard line.ticketsOut < limit else {
                let waiter = Waiter(admission: self, origin: origin)
                line.enqueue(waiter)
                return .waiting(waiter)
            }
            line.ticketsOut += 1
            return .admitted(Ticket(admission: self, origin: origin))
        }
    }

    /// The tickets out and the tasks waiting for `url`'s origin (for tests).
    func count(for url: URL) -> (ticketsOut: Int, waiting: Int) {
        state.withLock { state in
            guard let line = state.origins[Origin(url)] else { return (0, 0) }
            return (line.ticketsOut, line.waiting[line.head...].filter { $0?.isWaiting == true }.count)
        }
    }

    /// Calls `admit` with `waiter`'s ticket once it has one (at once, if it has), or with `nil` once the wait is
    /// cancelled; exactly once. A ticket given back elsewhere calls it on that thread, so it should only hand the
    /// ticket on (resume a continuation): work started there would run in the giver's task, with its task-local
    /// values.
    func onAdmission(of waiter: Waiter, _ admit: @escaping Admit) {
        let now = state.withLock { _ -> (Ticket?, Bool) in
            switch waiter.state {
            case .waiting:
                waiter.state = .waiting(admit)
                return (nil, false)
            case .admitted(let ticket):
                waiter.state = .done
                return (ticket, true)
            case .cancelled, .done:
                waiter.state = .done
                return (nil, true)
            }
        }
        if now.1 { admit(now.0) }
    }

    /// Ends `waiter`'s wait, unless it already has its ticket; its place in the line is skipped.
    fileprivate func cancel(_ waiter: Waiter) {
        let admit = state.withLock { _ -> Admit? in
            guard case .waiting(let admit) = waiter.state else { return nil }
            waiter.state = admit == nil ? .cancelled : .done
            return admit
        }
        admit?(nil)
    }

    /// Gives `ticket`'s place to the oldest task still waiting for it, or back to the origin; once per ticket.
    fileprivate func giveBack(_ ticket: Ticket) {
        let passed = state.withLock { state -> Passed in
            guard !ticket.given else { return Passed() }
            ticket.given = true
            return Self.pass(ticket.origin, in: &state, admission: self)
        }
        if let handOver = passed.handOver { hand(handOver) }
    }

    /// ``giveBack(_:)`` for a ticket dropped unreturned: no one else can see it any more, so its flag needs no lock.
    fileprivate func giveBack(droppedAt origin: Origin) {
        let passed = state.withLock { Self.pass(origin, in: &$0, admission: self) }
        if let handOver = passed.handOver { hand(handOver) }
    }

    /// What ``pass(_:in:admission:)`` did: a hand-over to make, or the waiter it gave a ticket to keep, released
    /// only once the lock is let go (if that was its last reference, its ticket gives itself back, under the lock).
    private struct Passed {
        var handOver: HandOver?
        var admitted: Waiter?
    }

    /// Passes a place at `origin` to its oldest waiter, or takes it off the tickets out.
    private static func pass(_ origin: Origin, in state: inout State, admission: ExchangeAdmission) -> Passed {
        var passed = Passed()
        guard let line = state.origins[origin] else { return passed }
        defer { if line.isIdle { state.origins[origin] = nil } }
        while let waiter = line.dequeue() {
            guard case .waiting(let admit) = waiter.state else { continue }  // cancelled meanwhile
            let next = Ticket(admission: admission, origin: origin)
            if let admit {
                waiter.state = .done
                passed.handOver = HandOver(admit: admit, ticket: next)
            } else {
                waiter.state = .admitted(next)
                passed.admitted = waiter
            }
            return passed
        }
        line.ticketsOut -= 1
        return passed
    }

    /// Calls a hand-over's `Admit`, and those handed over meanwhile, one after another on this thread. An `Admit`
    /// that starts an exchange which gives its ticket back before suspending (a cached answer) hands over again from
    /// inside this call: that hand-over waits its turn in the queue rather than nesting, so the stack stays flat
    /// however long the line.
    private func hand(_ first: HandOver) {
        let drains = state.withLock { state -> Bool in
            state.handOvers.append(first)
            defer { state.handingOver = true }
            return !state.handingOver
        }
        guard drains else { return }
        while let next = state.withLock({ state -> HandOver? in
            guard !state.handOvers.isEmpty else {
                state.handingOver = false
                return nil
            }
            return state.handOvers.removeFirst()
        }) {
            next.admit(next.ticket)
        }
    }

    /// A place in an origin's tickets. Give it back with ``giveBack()``; one dropped unreturned gives itself back,
    /// so no path that loses it can shrink the gate.
    final class Ticket: @unchecked Sendable {  // `given` is read and written only under the admission's lock
        fileprivate let admission: ExchangeAdmission
        fileprivate let origin: Origin
        fileprivate var given = false

        fileprivate init(admission: ExchangeAdmission, origin: Origin) {
            self.admission = admission
            self.origin = origin
        }

        /// Gives the place to the next task waiting, or back to the origin; later calls do nothing.
        func giveBack() {
            admission.giveBack(self)
        }

        deinit {
            if !given { admission.giveBack(droppedAt: origin) }
        }
    }

    /// A task's place in an origin's line.
    final class Waiter: @unchecked Sendable {  // `state` is read and written only under the admission's lock
        fileprivate enum State {
            /// In line; what to tell it, once known.
            case waiting(Admit?)
            /// Given a ticket before it said what to do with one.
            case admitted(Ticket)
            /// Cancelled before it said what to do.
            case cancelled
            /// Told.
            case done
        }

        fileprivate let admission: ExchangeAdmission
        fileprivate let origin: Origin
        fileprivate var state = State.waiting(nil)

        fileprivate init(admission: ExchangeAdmission, origin: Origin) {
            self.admission = admission
            self.origin = origin
        }

        fileprivate var isWaiting: Bool {
            if case .waiting = state { return true }
            return false
        }

        /// Ends the wait (its `Admit` gets `nil`), unless the ticket came first.
        func cancel() {
            admission.cancel(self)
        }

        /// Waits for the ticket. Cancelling the Swift task, or ``cancel()``, ends the wait with `CancellationError`,
        /// unless the ticket came first.
        func ticket() async throws -> Ticket {
            try await withTaskCancellationHandler {
                try await waitForTicket()
            } onCancel: {
                cancel()
            }
        }

        /// ``ticket()`` without a cancellation handler of its own, for a caller whose handler ends the wait with
        /// ``cancel()`` by its own road. Inlined, so that it adds no frame to the waiting task's.
        @inline(__always)
        func waitForTicket() async throws -> Ticket {
            try await withUnsafeThrowingContinuation { continuation in
                admission.onAdmission(of: self) { ticket in
                    if let ticket {
                        continuation.resume(returning: ticket)
                    } else {
                        continuation.resume(throwing: CancellationError())
                    }
                }
            }
        }
    }
}

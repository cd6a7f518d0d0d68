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
/// back (its place passes to the waiter) or by an entry that found a free place, never both; each waiter's
/// continuation is resumed exactly once.
final class ExchangeAdmission: Sendable {
    /// The most tickets out for one origin.
    let limit: Int
    private let origins = Locked([Origin: Line]())

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

    /// What ``enter(_:)`` gives: a ticket at once, or a place in the line to wait in.
    enum Entry {
        case admitted(Ticket)
        case waiting(Waiter)
    }

    /// Takes a ticket for `url`'s origin when one is free, else a place in its line.
    func enter(_ url: URL) -> Entry {
        let origin = Origin(url)
        return origins.withLock { origins -> Entry in
            let line: Line
            if let existing = origins[origin] {
                line = existing
            } else {
                line = Line()
                origins[origin] = line
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
        origins.withLock { origins in
            guard let line = origins[Origin(url)] else { return (0, 0) }
            return (line.ticketsOut, line.waiting[line.head...].filter { $0?.isWaiting == true }.count)
        }
    }

    /// Gives `ticket`'s place to the oldest task still waiting for it, or back to the origin; once per ticket.
    fileprivate func giveBack(_ ticket: Ticket) {
        let handOver = origins.withLock { origins -> HandOver? in
            guard !ticket.given else { return nil }
            ticket.given = true
            return Self.pass(ticket.origin, in: &origins, admission: self)
        }
        if let handOver { handOver.continuation.resume(returning: handOver.ticket) }
    }

    /// ``giveBack(_:)`` for a ticket dropped unreturned: no one else can see it any more, so its flag needs no lock.
    fileprivate func giveBack(droppedAt origin: Origin) {
        let handOver = origins.withLock { Self.pass(origin, in: &$0, admission: self) }
        if let handOver { handOver.continuation.resume(returning: handOver.ticket) }
    }

    /// A ticket passed to a waiter that had already suspended: resumed once the lock is let go.
    private struct HandOver {
        let ticket: Ticket
        let continuation: UnsafeContinuation<Ticket, any Error>
    }

    /// Passes a place at `origin` to its oldest waiter, or takes it off the tickets out.
    private static func pass(
        _ origin: Origin, in origins: inout [Origin: Line], admission: ExchangeAdmission
    ) -> HandOver? {
        guard let line = origins[origin] else { return nil }
        defer { if line.isIdle { origins[origin] = nil } }
        while let waiter = line.dequeue() {
            guard case .waiting(let continuation) = waiter.state else { continue }  // cancelled meanwhile
            let next = Ticket(admission: admission, origin: origin)
            guard let continuation else {
                waiter.state = .admitted(next)
                return nil
            }
            waiter.state = .resumed
            return HandOver(ticket: next, continuation: continuation)
        }
        line.ticketsOut -= 1
        return nil
    }

    /// Waits for `waiter`'s ticket. Cancelling the Swift task, or ``Waiter/cancel()``, ends the wait with
    /// `CancellationError`, unless the ticket came first.
    func wait(for waiter: Waiter) async throws -> Ticket {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                let now = origins.withLock { _ -> Result<Ticket, any Error>? in
                    switch waiter.state {
                    case .waiting:
                        waiter.state = .waiting(continuation)
                        return nil
                    case .admitted(let ticket):
                        waiter.state = .resumed
                        return .success(ticket)
                    case .cancelled, .resumed:
                        waiter.state = .resumed
                        return .failure(CancellationError())
                    }
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            waiter.cancel()
        }
    }

    /// Ends `waiter`'s wait, unless it already has its ticket; its place in the line is skipped.
    fileprivate func cancel(_ waiter: Waiter) {
        let continuation = origins.withLock { _ -> UnsafeContinuation<Ticket, any Error>? in
            guard case .waiting(let continuation) = waiter.state else { return nil }
            waiter.state = continuation == nil ? .cancelled : .resumed
            return continuation
        }
        continuation?.resume(throwing: CancellationError())
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
            /// In line; the continuation once the task has suspended.
            case waiting(UnsafeContinuation<Ticket, any Error>?)
            /// Given a ticket before it suspended.
            case admitted(Ticket)
            /// Cancelled before it suspended.
            case cancelled
            /// Its continuation is resumed, or about to be.
            case resumed
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

        /// Ends the wait with `CancellationError`, unless the ticket came first.
        func cancel() {
            admission.cancel(self)
        }
    }
}

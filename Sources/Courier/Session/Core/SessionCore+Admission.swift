import Foundation

/// The session's gate in front of its transport (``ExchangeAdmission``): a task takes its place before its exchange
/// is made.
extension SessionCore {
    /// Where a task stands at the gate.
    enum Admission {
        /// Past it at once, with its ticket (`nil` when the gate does not apply to the task).
        case now(ExchangeAdmission.Ticket?)
        /// In line.
        case later(ExchangeAdmission.Waiter)
    }

    /// Takes `task`'s place at the gate, or one in line. A task whose interceptor adapts requests skips the gate: an
    /// adapter may wait for another request of the same origin (a token refresh), which a full gate would hold back.
    /// Synchronous and not inlined, so its values stay out of the frames a waiting task keeps.
    @inline(never)
    func enterAdmission(_ task: SessionTask, delegate: TaskDelegate) -> Admission {
        guard let admission, let url = task.requestSource.url,
            configuration.interceptor?.adaptsRequests != true, delegate.interceptor?.adaptsRequests != true
        else { return .now(nil) }
        switch admission.enter(url) {
        case .admitted(let ticket): return .now(ticket)
        case .waiting(let waiter): return .later(waiter)
        }
    }

    /// `task`'s ticket, at once or after waiting in line. A task that must wait and whose start is still to be
    /// announced (`startDate`) has it announced first, so that its timeouts count the wait; `startDate` is then
    /// `nil`. Cancelling the Swift task ends the wait with `CancellationError`.
    func admitted(_ task: SessionTask, delegate: TaskDelegate, startDate: inout Date?) async throws
        -> ExchangeAdmission.Ticket?
    {
        switch enterAdmission(task, delegate: delegate) {
        case .now(let ticket):
            return ticket
        case .later(let waiter):
            if let date = startDate {
                announceStart(of: task, delegate: delegate, startDate: date)
                startDate = nil
            }
            return try await waiter.ticket()
        }
    }

    /// Runs a task of the `async` API that waits in line at the gate, in the caller's Swift task: the task starts (its
    /// `resumed` event, its timeouts), and a timeout, ``SessionTask/cancel()`` or cancelling the caller ends the
    /// wait, failing the task. Once admitted, `exchange` runs in a Swift task of its own, started from the caller's
    /// (so with its task-local values, a trace's context among them, and its priority) and run on this thread until
    /// it first suspends: the caller's task, which may make many requests one after another and wait in line for
    /// each, keeps only the few frames above the gate, and the exchange's go when that task ends.
    func runAfterWaiting<Value: Sendable>(
        _ waiter: ExchangeAdmission.Waiter, task: SessionTask, delegate: TaskDelegate,
        exchange: @escaping @Sendable (ExchangeAdmission.Ticket) async throws -> Value
    ) async throws -> Value {
        try startWaiting(waiter, task: task, delegate: delegate)
        let ticket: ExchangeAdmission.Ticket
        do {
            // One cancellation handler for the wait: `cancel()` reaches the waiter through the task's runner.
            ticket = try await withTaskCancellationHandler {
                try await waiter.waitForTicket()
            } onCancel: {
                task.cancel()
            }
        } catch {
            throw failWaiting(error, task: task, delegate: delegate)
        }
        let runner: Task<Value, any Error>
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            runner = Task.immediate { try await exchange(ticket) }
        } else {
            runner = Task { try await exchange(ticket) }  // one hop more to start it
        }
        task.attachRunner {
            delegate.exchange.cancel()
            runner.cancel()
        }
        return try await withTaskCancellationHandler {
            try await runner.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Starts a task that is to wait in line: marks it running, announces its start (its timeouts count from now)
    /// and lets a timeout or ``SessionTask/cancel()`` end the wait.
    @inline(never)
    private func startWaiting(_ waiter: ExchangeAdmission.Waiter, task: SessionTask, delegate: TaskDelegate) throws {
        do {
            try begin(task)
        } catch {
            waiter.cancel()
            throw error
        }
        announceStart(of: task, delegate: delegate, startDate: Date())
        task.attachRunner { waiter.cancel() }
    }

    /// Completes a task whose wait in line ended early with `error`; the error the call throws.
    @inline(never)
    private func failWaiting(_ error: any Error, task: SessionTask, delegate: TaskDelegate) -> CourierError {
        let failure = courierError(error, task: task, delegate: delegate)
        complete(task, delegate: delegate, with: .failed(failure))
        return failure
    }
}

import Foundation

/// The session's gate in front of its transport (``ExchangeAdmission``): a task takes its place before its exchange
/// is made.
extension SessionCore {
    /// Where a task stands at the gate.
    enum Admission {
        /// Past it at once, with its ticket (`nil` when the gate does not apply to the task).
        case now(ExchangeAdmission.Ticket?)
        /// In line.
        case later(ExchangeAdmission.Waiter, ExchangeAdmission)
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
        case .waiting(let waiter): return .later(waiter, admission)
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
        case .later(let waiter, let admission):
            if let date = startDate {
                announceStart(of: task, delegate: delegate, startDate: date)
                startDate = nil
            }
            return try await admission.wait(for: waiter)
        }
    }

    /// What a task of the `async` API was given at the gate: its ticket, and whether it waited in line for it.
    struct Admitted {
        var ticket: ExchangeAdmission.Ticket?
        var waited: Bool
    }

    /// Takes the place at the gate of a task of the `async` API, waiting in line for it if need be
    /// (``waitForAdmission(_:in:task:delegate:)``). Not generic, and called before the typed steps, so that a
    /// waiting task keeps few and small frames.
    func admit(_ task: SessionTask, delegate: TaskDelegate) async throws -> Admitted {
        switch enterAdmission(task, delegate: delegate) {
        case .now(let ticket):
            return Admitted(ticket: ticket, waited: false)
        case .later(let waiter, let admission):
            return Admitted(
                ticket: try await waitForAdmission(waiter, in: admission, task: task, delegate: delegate), waited: true)
        }
    }

    /// The `async` API's wait in line, in the caller's Swift task: the task starts (its `resumed` event, its
    /// timeouts), and a timeout, ``SessionTask/cancel()`` or cancelling the caller ends the wait. A wait that ends
    /// so completes the task with the error, which it throws.
    @inline(never)
    private func waitForAdmission(
        _ waiter: ExchangeAdmission.Waiter, in admission: ExchangeAdmission, task: SessionTask, delegate: TaskDelegate
    ) async throws -> ExchangeAdmission.Ticket {
        let startDate = Date()
        try begin(task)
        announceStart(of: task, delegate: delegate, startDate: startDate)
        task.attachRunner { waiter.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await admission.wait(for: waiter)
            } onCancel: {
                task.cancel()
            }
        } catch {
            let failure = courierError(error, task: task, delegate: delegate)
            complete(task, delegate: delegate, with: .failed(failure))
            throw failure
        }
    }
}

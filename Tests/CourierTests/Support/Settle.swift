import Dispatch

@testable import Courier

extension SessionManager {
    /// Invalidates the manager and waits until every task has completed and every completion handler has run.
    ///
    /// Afterwards nothing more can be delivered, so counting completions then proves "exactly once" without
    /// guessing how long a late second completion would take to arrive.
    func settle() async {
        await invalidateAndWait(cancelingTasks: false)
        let queue = completionQueue ?? .main
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }
}

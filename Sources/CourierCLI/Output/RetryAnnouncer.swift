import Courier
import Foundation

/// Prints each retry of `--retry` on standard error, e.g.
/// `courier: 503 service unavailable; retrying in 0.5 s (1 of 2)`. The error's text may hold what a server sent,
/// so it is escaped for the terminal.
final class RetryAnnouncer: EventMonitor {
    private let console: Console
    private let limit: Int

    init(console: Console, limit: Int) {
        self.console = console
        self.limit = limit
    }

    func task(_ task: SessionTask, willRetryAfter delay: Duration, dueTo error: CourierError) {
        let reason: String
        if case .unacceptableStatusCode(let status, _, _) = error {
            reason = "\(status) \(HTTPStatusPhrase.localizedString(forStatusCode: status))"
        } else {
            reason = TerminalText.escape(error.description, keepingLineBreaks: false)
        }
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) * 1e-18
        console.err(
            "courier: \(reason); retrying in \(String(format: "%g", seconds)) s (\(task.retryCount) of \(limit))\n")
    }
}

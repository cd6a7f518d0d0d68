import Courier
import Foundation

/// "waiting for the server…" on standard error, drawn while a request has gone unanswered for longer than a
/// ``NetworkActivityMonitor``'s activation delay (1 s), so quick responses never show it.
///
/// The monitor watches the request's session (put ``monitor`` in its event monitors); ``stop()`` removes the line
/// for good once the response head has arrived, before anything else is printed. Drawn only where progress is
/// (standard error a terminal, or forced for tests).
final class WaitingSpinner: Sendable {
    private struct State {
        var visible = false
        var stopped = false
        var frame = 0
        var since: ContinuousClock.Instant = .now
    }

    /// The monitor to give the session.
    let monitor = NetworkActivityMonitor()
    private let console: Console
    private let state = LockedValue(State())
    private let queue = DispatchQueue(label: "courier.spinner")
    private static let frames = ["|", "/", "-", "\\"]

    init(console: Console) {
        self.console = console
        monitor.isEnabled = console.showsProgress
        monitor.setNetworkingActivityActionBlock { [weak self] visible in
            visible ? self?.show() : self?.hide()
        }
    }

    /// Clears the line, if drawn, and draws nothing more.
    func stop() {
        let wasVisible = state.withLock { state -> Bool in
            defer {
                state.stopped = true
                state.visible = false
            }
            return state.visible
        }
        if wasVisible { console.err("\r\u{1B}[K") }
        monitor.isEnabled = false
    }

    private func show() {
        let start = state.withLock { state -> Bool in
            guard !state.stopped, !state.visible else { return false }
            state.visible = true
            state.since = .now - .seconds(monitor.activationDelay)
            return true
        }
        if start { draw() }
    }

    private func hide() {
        let wasVisible = state.withLock { state -> Bool in
            defer { state.visible = false }
            return state.visible && !state.stopped
        }
        if wasVisible { console.err("\r\u{1B}[K") }
    }

    /// One frame now and the next in 100 ms, while visible.
    private func draw() {
        let line = state.withLock { state -> String? in
            guard state.visible, !state.stopped else { return nil }
            defer { state.frame += 1 }
            let waited = ContinuousClock.now - state.since
            let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) * 1e-18
            return "\(Self.frames[state.frame % Self.frames.count]) waiting for the server… "
                + String(format: "%.1f s", seconds)
        }
        guard let line else { return }
        console.err("\r" + line + (console.stderrIsTerminal ? "\u{1B}[K" : ""))
        queue.asyncAfter(deadline: .now() + 0.1) { [weak self] in self?.draw() }
    }
}

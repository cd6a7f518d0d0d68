import Courier
import Foundation

/// Prints what each exchange took on standard error, for `--verbose`: one line per response, with the connection
/// and the times since the exchange began, then the task's total. E.g.
///
///     courier: GET https://127.0.0.1:8443/get → 200 · new connection, TLSv1.3, http/1.1, ready at 4.1 ms ·
///       request sent at 4.3 ms · first byte at 6.0 ms · done at 6.2 ms · 312 bytes
///     courier: 1 exchange in 6.4 ms
///
/// The URL is what a server may have sent (a redirect's `Location`), so it is escaped for the terminal.
final class MetricsPrinter: EventMonitor {
    private let console: Console
    /// Tasks whose metrics have been printed.
    private let printed = LockedValue(0)

    init(console: Console) {
        self.console = console
    }

    /// Waits (at most `limit`) until a task's metrics have been printed: monitors hear of a completion after the
    /// body has been handed out, and the command must not exit before.
    func waitUntilPrinted(limit: Duration = .seconds(2)) async {
        let deadline = ContinuousClock.now + limit
        while printed.withLock({ $0 }) == 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
        var text = ""
        for transaction in metrics.transactionMetrics {
            text += "courier: " + Self.describe(transaction) + "\n"
        }
        let exchanges = metrics.transactionMetrics.count
        text += "courier: \(exchanges) exchange\(exchanges == 1 ? "" : "s") in "
        text += Self.milliseconds(metrics.taskInterval.duration) + "\n"
        console.err(text)
        printed.withLock { $0 += 1 }
    }

    /// One transaction's line.
    static func describe(_ metrics: TransactionMetrics) -> String {
        let url = TerminalText.escape(metrics.url.absoluteString, keepingLineBreaks: false)
        var parts = ["\(TerminalText.escape(metrics.method, keepingLineBreaks: false)) \(url)"]
        if let status = metrics.statusCode { parts[0] += " → \(status)" }
        if metrics.resourceFetchType == .localCache {
            parts.append("from the cache")
            return parts.joined(separator: " · ")
        }
        var connection = [metrics.isReusedConnection ? "reused connection" : "new connection"]
        if let tls = metrics.negotiatedTLSProtocolVersion { connection.append(tls) }
        if let name = metrics.networkProtocolName { connection.append(name) }
        let start = metrics.fetchStartDate
        func at(_ label: String, _ date: Date?) {
            guard let start, let date else { return }
            parts.append("\(label) at \(milliseconds(date.timeIntervalSince(start)))")
        }
        if let ready = metrics.connectEndDate, let start {
            connection.append("ready at \(milliseconds(ready.timeIntervalSince(start)))")
        }
        parts.append(connection.joined(separator: ", "))
        at("request sent", metrics.requestEndDate)
        at("first byte", metrics.responseStartDate)
        at("done", metrics.responseEndDate)
        parts.append("\(metrics.countOfResponseBodyBytesReceived) bytes")
        return parts.joined(separator: " · ")
    }

    private static func milliseconds(_ seconds: TimeInterval) -> String {
        String(format: "%.1f ms", max(0, seconds) * 1000)
    }
}

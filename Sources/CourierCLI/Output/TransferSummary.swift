import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a transfer took, printed after the body: HTTPie's `--meta` (the elapsed time and the phases Courier
/// measures) and curl's `-w/--write-out FORMAT` with its common variables, for scripts.
///
/// It hears of the task's completion as an ``EventMonitor``: monitors are told after the body has been handed out,
/// so the command waits for it (``waitUntilCompleted(limit:)``) before printing.
final class TransferSummary: EventMonitor {
    /// The variables `-w` knows, as curl names them.
    static let variables = [
        "http_code", "time_total", "time_connect", "time_appconnect", "time_starttransfer", "size_download",
        "remote_ip",
    ]

    private let completed = LockedValue<(metrics: TaskMetrics, status: Int?)?>(nil)

    func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
        let status = task.response?.statusCode
        completed.withLock { $0 = (metrics, status) }
    }

    /// The completed task's metrics and final status, once heard of (at most `limit` later).
    func waitUntilCompleted(limit: Duration = .seconds(2)) async -> (metrics: TaskMetrics, status: Int?)? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let done = completed.withLock({ $0 }) { return done }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return completed.withLock { $0 }
    }

    /// `format` with curl's `%{variable}`s replaced, `%%` as `%`, and `\n`, `\t`, `\r` and `\\` unescaped; the
    /// names of unknown variables, which are replaced with nothing, as curl does.
    static func writeOut(_ format: String, metrics: TaskMetrics, status: Int?) -> (text: String, unknown: [String]) {
        let start = metrics.taskInterval.start
        let last = metrics.transactionMetrics.last
        func seconds(_ date: Date?) -> String {
            String(format: "%.6f", max(0, date.map { $0.timeIntervalSince(start) } ?? 0))
        }
        var text = ""
        var unknown: [String] = []
        var rest = Substring(format)
        while let character = rest.popFirst() {
            if character == "\\", let next = rest.first {
                let escapes: [Character: String] = ["n": "\n", "t": "\t", "r": "\r", "\\": "\\"]
                if let replacement = escapes[next] {
                    text += replacement
                    rest.removeFirst()
                    continue
                }
            }
            if character == "%", rest.first == "%" {
                text += "%"
                rest.removeFirst()
                continue
            }
            if character == "%", rest.first == "{", let close = rest.firstIndex(of: "}") {
                let name = String(rest[rest.index(after: rest.startIndex)..<close])
                rest = rest[rest.index(after: close)...]
                switch name {
                case "http_code": text += String(format: "%03d", status ?? 0)
                case "time_total": text += String(format: "%.6f", metrics.taskInterval.duration)
                // A transport that did not show the TCP step apart gives its ready moment, handshake included: the
                // nearest it knows, where 0 would read as no connection at all.
                case "time_connect": text += seconds(last.flatMap { Self.tcpConnected($0) ?? Self.tlsDone($0) })
                case "time_appconnect": text += seconds(last.flatMap(Self.tlsDone))
                case "time_starttransfer": text += seconds(last?.responseStartDate)
                case "size_download": text += String(metrics.countOfBytesReceived)
                case "remote_ip": text += last?.remoteAddress ?? ""
                default: unknown.append(name)
                }
                continue
            }
            text.append(character)
        }
        return (text, unknown)
    }

    /// `--meta`'s lines: the elapsed time, then the last exchange's phases.
    static func meta(_ metrics: TaskMetrics) -> String {
        let start = metrics.taskInterval.start
        func seconds(_ date: Date) -> String { String(format: "%.3fs", max(0, date.timeIntervalSince(start))) }
        let text = "\nElapsed time: \(String(format: "%.6f", metrics.taskInterval.duration))s\n"
        guard let last = metrics.transactionMetrics.last else { return text }
        var phases: [String] = []
        if last.connectEndDate != nil {
            if let connected = tcpConnected(last) {
                phases.append("connected (new connection): \(seconds(connected))")
            } else {
                phases.append("new connection")
            }
            if let done = tlsDone(last) {
                let version = last.negotiatedTLSProtocolVersion.map { " (\($0))" } ?? ""
                phases.append("TLS handshake done\(version): \(seconds(done))")
            }
        } else if last.resourceFetchType == .networkLoad {
            phases.append("reused connection")
        }
        if let first = last.responseStartDate {
            phases.append("first byte: \(seconds(first))")
        }
        phases.append("total: \(String(format: "%.3fs", max(0, metrics.taskInterval.duration)))")
        return text + phases.joined(separator: " · ") + "\n"
    }

    /// When TCP was connected, as curl's `time_connect` counts it: before the TLS handshake, which is
    /// `time_appconnect`'s. `nil` for a reused connection, and over TLS when the transport did not see the handshake
    /// begin (AsyncHTTPClient's connections, which carry streamed responses, tell only when they were ready): the
    /// moment the connection was ready would count the handshake in, which is what curl's variable leaves out.
    static func tcpConnected(_ transaction: TransactionMetrics) -> Date? {
        guard tlsDone(transaction) != nil else { return transaction.connectEndDate }
        return transaction.secureConnectionStartDate
    }

    /// When the TLS handshake was done (curl's `time_appconnect`); `nil` without TLS or on a reused connection.
    static func tlsDone(_ transaction: TransactionMetrics) -> Date? {
        guard transaction.negotiatedTLSProtocolVersion != nil || transaction.secureConnectionEndDate != nil else {
            return nil
        }
        return transaction.secureConnectionEndDate ?? transaction.connectEndDate
    }
}

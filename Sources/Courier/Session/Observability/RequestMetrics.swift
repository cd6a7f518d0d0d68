import CoreMetrics
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's request metrics (``SessionConfiguration/metricsFactory``), with swift-metrics:
/// - `courier_request_duration` (timer) and `courier_requests_total` (counter), with the dimensions `method`,
///   `status_class` (`2xx` … `5xx`, or `error` without a response) and `host`;
/// - `courier_errors_total`, with those and `kind` (the ``CourierError`` case, e.g. `timedOut` or
///   `unacceptableStatusCode`): failures of the transport, of validation and of parsing;
/// - `courier_retries_total`, with `method` and `host`;
/// - `courier_bytes_received_total` and `courier_bytes_sent_total`, with `method` and `host`.
struct RequestMetrics: EventMonitor {
    let factory: any MetricsFactory

    func task(_ task: SessionTask, willRetryAfter delay: Duration, dueTo error: CourierError) {
        Counter(label: "courier_retries_total", dimensions: Self.base(task), factory: factory).increment()
    }

    func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
        let base = Self.base(task)
        let dimensions = base + [("status_class", Self.statusClass(task.response?.statusCode))]
        let nanoseconds = Int64(max(0, metrics.taskInterval.duration * 1_000_000_000).rounded())
        Timer(label: "courier_request_duration", dimensions: dimensions, factory: factory)
            .recordNanoseconds(nanoseconds)
        Counter(label: "courier_requests_total", dimensions: dimensions, factory: factory).increment()
        Counter(label: "courier_bytes_received_total", dimensions: base, factory: factory)
            .increment(by: metrics.countOfBytesReceived)
        Counter(label: "courier_bytes_sent_total", dimensions: base, factory: factory)
            .increment(by: metrics.countOfBytesSent)
    }

    /// Counts the task's failure, from the transport or from validation and parsing.
    func task(_ task: SessionTask, didSerializeResponse result: Result<(any Sendable)?, any Error>) {
        guard case .failure(let error) = result else { return }
        let dimensions =
            Self.base(task) + [
                ("status_class", Self.statusClass(task.response?.statusCode)), ("kind", Self.kind(error)),
            ]
        Counter(label: "courier_errors_total", dimensions: dimensions, factory: factory).increment()
    }

    private static func base(_ task: SessionTask) -> [(String, String)] {
        let request = task.currentRequest
        return [("method", request?.httpMethod ?? "GET"), ("host", request?.url?.host ?? "")]
    }

    static func statusClass(_ status: Int?) -> String {
        guard let status, (100..<600).contains(status) else { return "error" }
        return "\(status / 100)xx"
    }

    /// The error's case name, e.g. `timedOut`, `cannotConnect`; `other` for an error that is not a ``CourierError``.
    static func kind(_ error: any Error) -> String {
        guard let courier = error as? CourierError else { return "other" }
        return Mirror(reflecting: courier).children.first?.label ?? "other"
    }
}

import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session's request log (``SessionConfiguration/logger``): one line per request at `.debug` (method, URL
/// without query values, status, bytes, duration, attempt), one per retry, and the header fields at `.trace`, with
/// secrets redacted. The session installs it only when the logger's level is `.debug` or lower, so a logger at the
/// default `.info` costs nothing.
struct RequestLogger: EventMonitor {
    let logger: Logger
    /// Lower-cased names of the header fields whose values are replaced by `<redacted>`.
    let redactedHeaders: Set<String>

    init(logger: Logger, redactedHeaders: Set<String>) {
        self.logger = logger
        self.redactedHeaders = Set(redactedHeaders.map { $0.lowercased() })
    }

    /// Whether `logger` would log anything this monitor writes.
    static func logs(_ logger: Logger) -> Bool { logger.logLevel <= .debug }

    func task(_ task: SessionTask, willRetryAfter delay: Duration, dueTo error: CourierError) {
        let request = task.currentRequest
        logger.debug(
            "\(request?.httpMethod ?? "GET") \(Self.loggable(request?.url)) failed (\(error.errorCode)); retrying",
            metadata: ["courier.retry.delay": "\(delay)", "courier.attempt": "\(task.retryCount)"])
    }

    func task(_ task: SessionTask, didCompleteWith metrics: TaskMetrics, error: (any Error)?) {
        let request = task.currentRequest
        let method = request?.httpMethod ?? "GET"
        let url = Self.loggable(request?.url)
        let status = task.response.map { String($0.statusCode) } ?? "no response"
        let milliseconds = (metrics.taskInterval.duration * 1000 * 10).rounded() / 10
        let outcome = error.map { " failed: \(($0 as? CourierError)?.errorCode ?? -1)" } ?? ""
        let line =
            "\(method) \(url) \(status), \(metrics.countOfBytesReceived) bytes, \(milliseconds) ms, attempt "
            + "\(task.retryCount + 1)\(outcome)"
        logger.debug(
            "\(line)",
            metadata: [
                "http.request.method": "\(method)", "url.full": "\(url)", "http.response.status_code": "\(status)",
                "courier.bytes_received": "\(metrics.countOfBytesReceived)",
                "courier.bytes_sent": "\(metrics.countOfBytesSent)", "courier.duration_ms": "\(milliseconds)",
                "courier.attempt": "\(task.retryCount + 1)",
            ])
        guard logger.logLevel <= .trace else { return }
        logger.trace("request headers: \(headers(request?.allHTTPHeaderFields ?? [:]))")
        if let response = task.response {
            let fields = response.allHeaderFields.reduce(into: [String: String]()) { fields, entry in
                fields["\(entry.key)"] = "\(entry.value)"
            }
            logger.trace("response headers: \(headers(fields))")
        }
    }

    /// The fields, sorted by name, redacted ones as `<redacted>`.
    func headers(_ fields: [String: String]) -> String {
        fields.sorted { $0.key.lowercased() < $1.key.lowercased() }.map { name, value in
            "\(name): \(redactedHeaders.contains(name.lowercased()) ? "<redacted>" : value)"
        }.joined(separator: "; ")
    }

    /// `url` with every query value and any user info removed (`?page=&q=`): query strings carry tokens and
    /// personal data.
    static func loggable(_ url: URL?) -> String {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url?.absoluteString ?? "(no URL)"
        }
        components.user = nil
        components.password = nil
        components.fragment = nil
        if let items = components.queryItems {
            components.queryItems = items.map { URLQueryItem(name: $0.name, value: $0.value == nil ? nil : "") }
        }
        return components.string ?? "(no URL)"
    }
}

import CoreMetrics
import Foundation
import Logging

/// The session's observability, made from its configuration by ``SessionManager`` and handed to the core as what
/// the core knows: event monitors and an interceptor. The core names none of these features.
extension SessionConfiguration {
    /// The monitors the logger and the metrics factory need, when they would record anything (the tracing's is
    /// the session's `RequestTracing`, which is also an adapter).
    var observabilityMonitors: [any EventMonitor] {
        var monitors: [any EventMonitor] = []
        if let logger, RequestLogger.logs(logger) {
            monitors.append(RequestLogger(logger: logger, redactedHeaders: redactedHeaders))
        }
        if let metricsFactory, !(metricsFactory is NOOPMetricsHandler) {
            monitors.append(RequestMetrics(factory: metricsFactory))
        }
        return monitors
    }
}

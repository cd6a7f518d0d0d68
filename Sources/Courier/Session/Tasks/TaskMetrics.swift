import Foundation

/// What one task took: `URLSessionTaskMetrics`' shape, on every transport.
///
/// A task's metrics are on ``SessionTask/metrics`` once it has completed, on every ``DataResponse``
/// (``DataResponse/taskMetrics``), in ``EventMonitor/task(_:didCompleteWith:error:)``, and in the did-complete
/// notification's user info (``SessionNotificationKey/sessionTaskMetrics``).
public struct TaskMetrics: Sendable, Hashable {
    /// From the task's start (its first ``SessionTask/resume()``) to its completion; a task cancelled before it
    /// started has an interval of zero length at its completion.
    public var taskInterval: DateInterval
    /// How many redirects the task followed.
    public var redirectCount: Int
    /// How many exchanges the task sent: one, plus one per redirect, answered challenge or restarted download.
    public var exchangeCount: Int
    /// Request-body bytes sent.
    public var countOfBytesSent: Int64
    /// Response-body bytes received (of the final response).
    public var countOfBytesReceived: Int64
    /// One per response, in order: each redirect, challenge, retry and the final response (see
    /// ``TransactionMetrics`` for what each transport measures). An exchange that failed before its response
    /// arrived has none.
    public var transactionMetrics: [TransactionMetrics]

    /// Creates metrics.
    public init(
        taskInterval: DateInterval, redirectCount: Int, exchangeCount: Int, countOfBytesSent: Int64,
        countOfBytesReceived: Int64, transactionMetrics: [TransactionMetrics] = []
    ) {
        self.transactionMetrics = transactionMetrics
        self.taskInterval = taskInterval
        self.redirectCount = redirectCount
        self.exchangeCount = exchangeCount
        self.countOfBytesSent = countOfBytesSent
        self.countOfBytesReceived = countOfBytesReceived
    }
}

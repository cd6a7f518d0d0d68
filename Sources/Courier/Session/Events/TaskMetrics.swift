import Foundation

/// What one task took, as ``EventMonitor/task(_:didCompleteWith:error:)`` reports it (the part of
/// `URLSessionTaskMetrics` every transport can measure).
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

    /// Creates metrics.
    public init(
        taskInterval: DateInterval, redirectCount: Int, exchangeCount: Int, countOfBytesSent: Int64,
        countOfBytesReceived: Int64
    ) {
        self.taskInterval = taskInterval
        self.redirectCount = redirectCount
        self.exchangeCount = exchangeCount
        self.countOfBytesSent = countOfBytesSent
        self.countOfBytesReceived = countOfBytesReceived
    }
}

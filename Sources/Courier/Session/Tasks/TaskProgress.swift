import Foundation

/// How far a transfer has come, how fast it is going and how long it should still take.
///
/// Sessions deliver progress at most every 50 ms per direction (``TaskProgress/reportingInterval``), and a
/// transfer that succeeds always ends with a value whose ``fractionCompleted`` is exactly `1`.
public struct TaskProgress: Sendable, Hashable {
    /// Bytes transferred so far (for a resumed download, including the bytes that were already on disk).
    public var completed: Int64
    /// Bytes expected in all, or `-1` when unknown.
    public var total: Int64
    /// Bytes per second since the transfer's first byte, or `0` before there is a rate to report.
    public var throughput: Double
    /// Seconds left at the current throughput, or `nil` while the total or the rate is unknown.
    public var estimatedTimeRemaining: TimeInterval?

    /// The shortest time between two progress reports of one task and direction.
    public static let reportingInterval: Duration = .milliseconds(50)

    /// Creates a progress value.
    public init(
        completed: Int64, total: Int64, throughput: Double = 0, estimatedTimeRemaining: TimeInterval? = nil
    ) {
        self.completed = completed
        self.total = total
        self.throughput = throughput
        self.estimatedTimeRemaining = estimatedTimeRemaining
    }

    /// `completed / total` in `0...1`, or `0` while the total is unknown (1 once a finished transfer's total is
    /// known).
    public var fractionCompleted: Double {
        guard total > 0 else { return total == 0 ? 1 : 0 }
        return min(1, Double(completed) / Double(total))
    }
}

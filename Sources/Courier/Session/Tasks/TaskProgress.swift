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

/// One direction's progress of one task: the current value, when it was last reported, and the rate.
///
/// Reports are throttled to ``TaskProgress/reportingInterval``; the first report, a report that reaches the total
/// and the final report are never dropped.
struct ProgressMeter {
    private(set) var progress = TaskProgress(completed: 0, total: -1)
    private var startedAt: ContinuousClock.Instant?
    private var startedWith: Int64 = 0
    private var lastReport: ContinuousClock.Instant?
    private var lastReported: TaskProgress?

    /// Sets the expected total.
    mutating func expect(total: Int64) {
        progress.total = total
    }

    /// Sets the bytes already done before this transfer started (a resumed download's file on disk).
    mutating func start(at completed: Int64) {
        progress.completed = completed
        startedWith = completed
    }

    /// Records `completed` bytes; returns the value to report, or `nil` when it is too soon since the last one.
    mutating func update(completed: Int64, now: ContinuousClock.Instant = .now) -> TaskProgress? {
        if startedAt == nil { startedAt = now }
        progress.completed = completed
        refreshRate(now: now)
        let reachedTotal = progress.total >= 0 && completed >= progress.total
        if let lastReport, now - lastReport < TaskProgress.reportingInterval, !reachedTotal { return nil }
        return report(now: now)
    }

    /// The last value of a successful transfer: the total becomes the bytes actually moved, so the fraction is
    /// exactly 1 (a decompressed body is longer than its `Content-Length`). `nil` when that was already reported.
    mutating func finish(now: ContinuousClock.Instant = .now) -> TaskProgress? {
        progress.total = progress.completed
        progress.estimatedTimeRemaining = 0
        if let lastReported, lastReported.completed == progress.completed, lastReported.total == progress.total {
            return nil
        }
        return report(now: now)
    }

    /// Whether anything was reported at all.
    var hasReported: Bool { lastReport != nil }

    private mutating func report(now: ContinuousClock.Instant) -> TaskProgress {
        lastReport = now
        lastReported = progress
        return progress
    }

    private mutating func refreshRate(now: ContinuousClock.Instant) {
        guard let startedAt else { return }
        let elapsed = now - startedAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        guard seconds > 0 else { return }
        progress.throughput = Double(progress.completed - startedWith) / seconds
        if progress.total >= 0, progress.throughput > 0 {
            progress.estimatedTimeRemaining = Double(max(0, progress.total - progress.completed)) / progress.throughput
        } else {
            progress.estimatedTimeRemaining = nil
        }
    }
}

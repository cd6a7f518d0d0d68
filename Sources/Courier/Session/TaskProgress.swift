/// How far a transfer has come.
public struct TaskProgress: Sendable, Hashable {
    /// Bytes transferred so far.
    public var completed: Int64
    /// Bytes expected in all, or `-1` when unknown.
    public var total: Int64

    /// Creates a progress value.
    public init(completed: Int64, total: Int64) {
        self.completed = completed
        self.total = total
    }

    /// `completed / total` in `0...1`, or `0` while the total is unknown (1 once a finished transfer's total is
    /// known).
    public var fractionCompleted: Double {
        guard total > 0 else { return total == 0 ? 1 : 0 }
        return min(1, Double(completed) / Double(total))
    }
}

import Foundation

/// A value behind a lock, for the transports' state that tests read from other tasks. `Mutex` would do, but needs
/// macOS 15, and the package supports macOS 13.
final class Guarded<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `value` goes through `lock`, in `withLock` below.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

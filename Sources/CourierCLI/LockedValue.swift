import Foundation

/// A value behind a lock, for the few pieces of state the command line shares between threads.
///
/// `@unchecked Sendable`: `value` is only read or written inside `withLock`, under `lock`.
final class LockedValue<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

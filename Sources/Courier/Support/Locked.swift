import Foundation

/// A value guarded by a lock.
///
/// `@unchecked Sendable` is sound because every access to `value` goes through `withLock`, which holds `lock`
/// for the whole access; this is the one place Courier shares mutable state between threads without an actor.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. `body` must not block or await.
    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

extension Locked where Value: Sendable {
    /// A copy of the value.
    var value: Value { withLock { $0 } }
}

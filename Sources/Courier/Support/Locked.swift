import NIOConcurrencyHelpers

/// A value guarded by a lock; copies share the one value and lock.
///
/// A whole task allocates several of these, so the value and its lock live in one allocation (NIO's
/// `NIOLockedValueBox`) rather than in a class that holds an `NSLock`, which on Linux is three more.
///
/// `@unchecked Sendable` is sound because every access to the value goes through `withLock`, which holds the lock
/// for the whole access; this is the one place Courier shares mutable state between threads without an actor.
struct Locked<Value>: @unchecked Sendable {
    private let box: NIOLockedValueBox<Value>

    init(_ value: Value) {
        box = NIOLockedValueBox(value)
    }

    /// Runs `body` with exclusive access to the value. `body` must not block or await.
    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try box.withLockedValue(body)
    }
}

extension Locked where Value: Sendable {
    /// A copy of the value.
    var value: Value { withLock { $0 } }
}

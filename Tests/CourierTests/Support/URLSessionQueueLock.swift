/// Keeps the tests that make Linux's URLSession read a head of thousands of lines apart from the URLSession tests
/// that depend on timing.
///
/// FoundationNetworking reads every session's response heads on one serial queue that the whole process shares, in
/// time quadratic in the head's lines (SECURITY.md, "Known limits"; `Benchmarks/urlsession-head-lines.sh`): while
/// it reads 10,000 header fields (about 2 s on the 2-core machine), no other URLSession of the test process gets a
/// byte. A fault test whose timeout must fire while bytes are moving then saw none move (`FaultTests`'s resource
/// timeout during a slow body, run beside `HostilePathTests`). The long heads take the lock exclusively and the
/// timing tests share it, so the two kinds never overlap; tests of one kind still run side by side.
///
/// Invariant: at any time either one exclusive holder or any number of shared holders; waiters are let in in the
/// order they came, so neither kind can starve the other.
actor URLSessionQueueLock {
    private static let shared = URLSessionQueueLock()

    private var sharedHolders = 0
    private var exclusivelyHeld = false
    private var waiting: [(exclusive: Bool, continuation: CheckedContinuation<Void, Never>)] = []

    /// Runs `body` while no test holds the lock exclusively.
    static func withShared<T>(_ body: () async throws -> T) async throws -> T {
        try await shared.holding(exclusive: false, body)
    }

    /// Runs `body` while no other test holds the lock.
    static func withExclusive<T>(_ body: () async throws -> T) async throws -> T {
        try await shared.holding(exclusive: true, body)
    }

    /// Runs `body` under the lock when `condition` holds, else at once.
    static func withShared<T>(if condition: Bool, _ body: () async throws -> T) async throws -> T {
        condition ? try await withShared(body) : try await body()
    }

    /// Runs `body` holding the lock alone when `condition` holds, else at once.
    static func withExclusive<T>(if condition: Bool, _ body: () async throws -> T) async throws -> T {
        condition ? try await withExclusive(body) : try await body()
    }

    private nonisolated func holding<T>(exclusive: Bool, _ body: () async throws -> T) async throws -> T {
        await acquire(exclusive: exclusive)
        do {
            let value = try await body()
            await release(exclusive: exclusive)
            return value
        } catch {
            await release(exclusive: exclusive)
            throw error
        }
    }

    private func acquire(exclusive: Bool) async {
        if waiting.isEmpty, canTake(exclusive: exclusive) {
            take(exclusive: exclusive)
            return
        }
        await withCheckedContinuation { waiting.append((exclusive, $0)) }
    }

    private func release(exclusive: Bool) {
        if exclusive { exclusivelyHeld = false } else { sharedHolders -= 1 }
        while let next = waiting.first, canTake(exclusive: next.exclusive) {
            waiting.removeFirst()
            take(exclusive: next.exclusive)
            next.continuation.resume()
        }
    }

    private func canTake(exclusive: Bool) -> Bool {
        exclusive ? !exclusivelyHeld && sharedHolders == 0 : !exclusivelyHeld
    }

    private func take(exclusive: Bool) {
        if exclusive { exclusivelyHeld = true } else { sharedHolders += 1 }
    }
}

/// Values that are costly to make, kept for the keys used most recently: at most `limit` of them, all dropped when a
/// new one would exceed it. Shared by copies; safe from any thread.
///
/// For work a call repeats with the same input (parsing the same URL again), where a miss costs one dictionary
/// look-up and the cache never grows past `limit`.
struct RecentValues<Key: Hashable, Value>: Sendable {
    private let values: Locked<[Key: Value]>
    private let limit: Int

    init(limit: Int) {
        values = Locked([:])
        self.limit = limit
    }

    /// The value kept for `key`, or the one `make` gives, then kept. `make` runs outside the lock, so two threads
    /// missing at once may both make a value; the last one made is kept.
    func value(for key: Key, make: () throws -> Value) rethrows -> Value {
        if let value = kept(key) { return value }
        let value = try make()
        keep(value, for: key)
        return value
    }

    /// ``value(for:make:)`` for a value that cannot always be made: a `nil` from `make` is returned, not kept.
    func value(for key: Key, makeIfPossible make: () throws -> Value?) rethrows -> Value? {
        if let value = kept(key) { return value }
        guard let value = try make() else { return nil }
        keep(value, for: key)
        return value
    }

    private func kept(_ key: Key) -> Value? {
        values.withLock { $0[key] }
    }

    private func keep(_ value: Value, for key: Key) {
        values.withLock { values in
            if values.count >= limit { values.removeAll(keepingCapacity: true) }
            values[key] = value
        }
    }
}

#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking

    /// The `URLCache` Courier's default sessions use on Linux: memory only, keyed by the whole URL, evicting the
    /// least recently stored entries first.
    ///
    /// swift-corelibs-foundation's own `URLCache` is not fit to be a default: it keys entries by host, port and path
    /// (so `?page=2` is answered with `?page=1`'s response, and `http` with `https`'s), lists a key again each time
    /// it is stored and then crashes evicting it the second time, lists a directory on every miss, and makes that
    /// directory in the user's home even when it has no disk capacity. This class overrides every method that
    /// reads or writes entries, so none of that code runs.
    ///
    /// Invariant: ``currentMemoryUsage`` (the sum of the stored bodies' sizes) never exceeds `memoryCapacity`; a
    /// response larger than the capacity is not stored.
    final class MemoryURLCache: URLCache, @unchecked Sendable {
        // @unchecked: `URLCache` is an open class; every entry lives in `store`, behind its lock.
        private struct Entry {
            var response: CachedURLResponse
            var cost: Int
            var serial: UInt64
            var stored: Date
        }

        private struct Store {
            var entries: [String: Entry] = [:]
            /// Keys in the order they were stored, each with its serial; a listing whose serial no longer matches
            /// its entry's is stale and skipped (so a key stored again is never evicted by its old listing).
            var order: [(key: String, serial: UInt64)] = []
            var head = 0
            var nextSerial: UInt64 = 0
            var usage = 0

            mutating func evict(downTo capacity: Int) {
                while usage > capacity, head < order.count {
                    let (key, serial) = order[head]
                    head += 1
                    if let entry = entries[key], entry.serial == serial {
                        entries[key] = nil
                        usage -= entry.cost
                    }
                }
                if head > 64, head * 2 > order.count {
                    order.removeFirst(head)
                    head = 0
                }
            }

            mutating func remove(_ key: String) {
                if let entry = entries.removeValue(forKey: key) { usage -= entry.cost }
            }
        }

        private let store = Locked(Store())

        /// A cache of `capacity` bytes, in memory only.
        init(capacity: Int) {
            // "/dev/null" cannot be made a directory, so the superclass makes none (it would otherwise make one in
            // the user's caches folder); nothing here reads or writes it.
            super.init(memoryCapacity: capacity, diskCapacity: 0, diskPath: "/dev/null")
        }

        /// The key: ``HTTPCaching/key(_:)``, the URL without its fragment.
        static func key(_ url: URL?) -> String? {
            url.map(HTTPCaching.key)
        }

        /// Whether anything is stored for `url`, without making a `URLRequest`: a session skips its cache step
        /// (and sends the request at once) when nothing is.
        func hasEntry(for url: URL) -> Bool {
            guard let key = Self.key(url) else { return false }
            return store.withLock { $0.entries[key] != nil }
        }

        override func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
            guard let key = Self.key(request.url) else { return nil }
            return store.withLock { $0.entries[key]?.response }
        }

        override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
            guard let key = Self.key(request.url), cachedResponse.storagePolicy != .notAllowed else { return }
            let cost = cachedResponse.data.count
            let capacity = memoryCapacity
            store.withLock { store in
                store.remove(key)
                guard cost <= capacity else { return }
                store.evict(downTo: capacity - cost)
                store.nextSerial += 1
                store.entries[key] = Entry(
                    response: cachedResponse, cost: cost, serial: store.nextSerial, stored: Date())
                store.order.append((key, store.nextSerial))
                store.usage += cost
            }
        }

        override func removeCachedResponse(for request: URLRequest) {
            guard let key = Self.key(request.url) else { return }
            store.withLock { $0.remove(key) }
        }

        override func removeAllCachedResponses() {
            store.withLock { $0 = Store() }
        }

        override func removeCachedResponses(since date: Date) {
            store.withLock { store in
                for (key, entry) in store.entries where entry.stored > date { store.remove(key) }
            }
        }

        override var memoryCapacity: Int {
            didSet {
                let capacity = memoryCapacity
                store.withLock { $0.evict(downTo: capacity) }
            }
        }

        override var currentMemoryUsage: Int { store.withLock { $0.usage } }

        override var currentDiskUsage: Int { 0 }
    }
#endif

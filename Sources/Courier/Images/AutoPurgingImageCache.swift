import Foundation

/// An in-memory image cache that purges the least recently used images when it grows past its capacity
/// (AFNetworking's `AFAutoPurgingImageCache`).
///
/// An image costs ``Image/cost`` bytes (width × height × 4). When an add takes ``memoryUsage`` past
/// ``memoryCapacity``, the images accessed least recently (added or read) are removed until the usage is at or
/// under ``preferredMemoryUsageAfterPurge``. Replacing an identifier's image adjusts the usage by the difference.
///
/// Thread-safe: every call holds one lock for its own work only, never while calling out; a purge is O(images
/// removed) (the access order is a linked list, not a sort), and removed images are released after the lock is
/// let go. So a read waits at most for one write.
public final class AutoPurgingImageCache: ImageRequestCache {
    /// The usage past which an add purges.
    public let memoryCapacity: UInt64
    /// The usage a purge brings the cache down to.
    public let preferredMemoryUsageAfterPurge: UInt64

    /// The images, and the reads that found one or none: one lock for both, so a read takes it once.
    private struct State {
        var storage = LRUStorage()
        var hits = 0
        var misses = 0
    }

    private let state = Locked(State())

    /// A cache; AFNetworking's defaults are 100 MiB and 60 MiB. A preferred size above the capacity is lowered to
    /// the capacity.
    public init(
        memoryCapacity: UInt64 = 100 * 1024 * 1024, preferredMemoryCapacityAfterPurge: UInt64 = 60 * 1024 * 1024
    ) {
        self.memoryCapacity = memoryCapacity
        self.preferredMemoryUsageAfterPurge = min(preferredMemoryCapacityAfterPurge, memoryCapacity)
    }

    /// The total cost of the images held.
    public var memoryUsage: UInt64 { state.withLock { $0.storage.usage } }

    /// The number of images held.
    public var count: Int { state.withLock { $0.storage.count } }

    /// How many reads found an image, since the cache was made.
    public var hitCount: Int { state.withLock { $0.hits } }
    /// How many reads found none, since the cache was made.
    public var missCount: Int { state.withLock { $0.misses } }

    public func add(_ image: Image, withIdentifier identifier: String) {
        let released = state.withLock { state -> [Image] in
            var released: [Image] = []
            if let replaced = state.storage.insert(image, cost: image.cost, for: identifier) {
                released.append(replaced)
            }
            if state.storage.usage > memoryCapacity {
                while state.storage.usage > preferredMemoryUsageAfterPurge,
                    let purged = state.storage.removeLeastRecentlyUsed()
                {
                    released.append(purged)
                }
            }
            return released
        }
        withExtendedLifetime(released) {}
    }

    @discardableResult public func removeImage(withIdentifier identifier: String) -> Bool {
        let removed = state.withLock { $0.storage.remove(identifier) }
        return removed != nil
    }

    @discardableResult public func removeAllImages() -> Bool {
        let removed = state.withLock { state -> LRUStorage in
            defer { state.storage = LRUStorage() }
            return state.storage
        }
        return removed.count > 0
    }

    public func image(withIdentifier identifier: String) -> Image? {
        state.withLock { state in
            let image = state.storage.touch(identifier)
            if image == nil { state.misses += 1 } else { state.hits += 1 }
            return image
        }
    }
}

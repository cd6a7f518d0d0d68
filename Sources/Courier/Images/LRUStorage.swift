/// The images of an ``AutoPurgingImageCache`` by identifier, in order of last access: a dictionary whose entries
/// form a doubly linked list, most recent first, so that every operation is O(1).
struct LRUStorage {
    private struct Entry {
        var image: Image
        var cost: UInt64
        var newer: String?
        var older: String?
    }

    private var entries: [String: Entry] = [:]
    private var newest: String?
    private var oldest: String?
    /// The sum of the entries' costs (saturating).
    private(set) var usage: UInt64 = 0

    var count: Int { entries.count }

    /// Stores `image` as the most recent entry; returns the image it replaced.
    mutating func insert(_ image: Image, cost: UInt64, for identifier: String) -> Image? {
        let replaced = remove(identifier)
        entries[identifier] = Entry(image: image, cost: cost, newer: nil, older: newest)
        if let newest { entries[newest]?.newer = identifier }
        newest = identifier
        if oldest == nil { oldest = identifier }
        usage = usage.addingReportingOverflow(cost).overflow ? .max : usage + cost
        return replaced
    }

    /// The image under `identifier`, which becomes the most recent entry.
    mutating func touch(_ identifier: String) -> Image? {
        guard let entry = entries[identifier] else { return nil }
        if newest != identifier {
            unlink(identifier, entry)
            entries[identifier] = Entry(image: entry.image, cost: entry.cost, newer: nil, older: newest)
            if let newest { entries[newest]?.newer = identifier }
            newest = identifier
            if oldest == nil { oldest = identifier }
        }
        return entry.image
    }

    /// Removes the entry under `identifier`; returns its image.
    mutating func remove(_ identifier: String) -> Image? {
        guard let entry = entries.removeValue(forKey: identifier) else { return nil }
        unlink(identifier, entry)
        usage -= min(usage, entry.cost)
        return entry.image
    }

    /// Removes the least recently accessed entry; returns its image.
    mutating func removeLeastRecentlyUsed() -> Image? {
        guard let oldest else { return nil }
        return remove(oldest)
    }

    /// Takes `entry` (under `identifier`) out of the list, joining its neighbours.
    private mutating func unlink(_ identifier: String, _ entry: Entry) {
        if let newer = entry.newer { entries[newer]?.older = entry.older } else { newest = entry.older }
        if let older = entry.older { entries[older]?.newer = entry.newer } else { oldest = entry.newer }
    }
}

import Foundation
import Testing

@testable import Courier

/// ``ReachabilityManager/callbackQueue``: the status block and the notification come on the main queue by default,
/// as AFNetworking's do, or on the queue given.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ReachabilityCallbackQueueTests {
    /// What the block and the observer saw: the status, and whether each came on the queue being checked.
    final class Seen: Sendable {
        let block = Locked<[(ReachabilityStatus, Bool)]>([])
        let notifications = Locked<[(Int, Bool)]>([])
    }

    /// Starts watching 127.0.0.1 (reachable from the start: one change, from unknown) and returns what came.
    static func watchLoopback(queue: DispatchQueue?, onQueue: @escaping @Sendable () -> Bool) async throws -> Seen {
        let manager = try ReachabilityManager(address: "127.0.0.1")
        if let queue { manager.callbackQueue = queue }
        let seen = Seen()
        manager.setReachabilityStatusChangeBlock { status in seen.block.withLock { $0.append((status, onQueue())) } }
        let observer = NotificationCenter.default.addObserver(
            forName: .reachabilityDidChange, object: manager, queue: nil
        ) { note in
            let raw = (note.userInfo?[ReachabilityManager.statusUserInfoKey] as? NSNumber)?.intValue ?? -2
            seen.notifications.withLock { $0.append((raw, onQueue())) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        try await waitUntil { seen.block.withLock { $0.count } == 1 && seen.notifications.withLock { $0.count } == 1 }
        return seen
    }

    @Test("By default on the main queue")
    func mainByDefault() async throws {
        let seen = try await Self.watchLoopback(queue: nil, onQueue: { NotificationQueueTests.onMainQueue })
        let block = seen.block.withLock { $0 }
        #expect(block.first?.0 == .reachableViaWiFi)
        #expect(block.first?.1 == true, "the block ran off the main queue")
        let notification = seen.notifications.withLock { $0 }
        #expect(notification.first?.0 == ReachabilityStatus.reachableViaWiFi.rawValue)
        #expect(notification.first?.1 == true, "the notification was posted off the main queue")
    }

    @Test("On the queue given")
    func onTheGivenQueue() async throws {
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "ReachabilityCallbackQueueTests")
        queue.setSpecific(key: key, value: 3)
        let seen = try await Self.watchLoopback(queue: queue, onQueue: { DispatchQueue.getSpecific(key: key) == 3 })
        #expect(seen.block.withLock { $0.first?.1 } == true)
        #expect(seen.notifications.withLock { $0.first?.1 } == true)
    }
}

import Dispatch
import Foundation

/// Watches whether the internet, a host or an address can be reached (AFNetworking's
/// `AFNetworkReachabilityManager`), on Linux from the kernel's routing table.
///
/// ```swift
/// let reachability = ReachabilityManager.shared
/// reachability.setReachabilityStatusChangeBlock { status in print(status) }
/// reachability.startMonitoring()
/// print(reachability.status)  // already known: the current state is read before startMonitoring() returns
/// ```
///
/// Reachable means there is a route to the target whose interface is up and running: the default route for the
/// general case (AFNetworking's zero address), the route the kernel would use for an address, and for a domain the
/// route to any of its resolved addresses. Nothing is sent to check: an address's route is found with a UDP
/// `connect`, which sends no packet. A status is reported only when it changes, never twice in a row.
///
/// On Linux the state comes from a `NETLINK_ROUTE` socket: a dump of the links and routes when monitoring starts,
/// then every change within milliseconds, read by a dispatch source on the manager's queue. Ethernet is reported as
/// ``ReachabilityStatus/reachableViaWiFi`` (as AFNetworking does on macOS), PPP and raw-IP links as
/// ``ReachabilityStatus/reachableViaWWAN``. On Apple platforms `NWPathMonitor` reports the changes and names the
/// interface's kind (Wi-Fi, cellular, wired); an address's or a domain's route is found the same way as on Linux.
public final class ReachabilityManager: Sendable {
    /// What is watched.
    public enum Target: Sendable, Hashable {
        /// Any route to the internet (AFNetworking's zero address).
        case internet
        /// A host name, resolved at each change.
        case domain(String)
        /// An IPv4 or IPv6 literal.
        case address(String)
    }

    /// The user-info key of `Notification.Name.reachabilityDidChange` for the new status (its raw
    /// value as an `NSNumber`): AFNetworking's `AFNetworkingReachabilityNotificationStatusItem`.
    public static let statusUserInfoKey = "AFNetworkingReachabilityNotificationStatusItem"

    /// The general case, shared.
    public static let shared = ReachabilityManager()

    private struct State {
        var status = ReachabilityStatus.unknown
        var path: ReachabilityPath?
        var block: (@Sendable (ReachabilityStatus) -> Void)?
        var continuations: [UUID: AsyncStream<ReachabilityStatus>.Continuation] = [:]
        var monitoring = false
        var callbackQueue: DispatchQueue? = .main
        /// Counts `startMonitoring()` calls, so that a stopped source's late reading is not reported.
        var generation = 0
        var source: (any ReachabilitySource)?
    }

    /// What this manager watches.
    public let target: Target
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "Courier.ReachabilityManager")

    /// Watches the general case: any route to the internet.
    public convenience init() {
        self.init(target: .internet)
    }

    /// Watches a host name.
    public convenience init(domain: String) {
        self.init(target: .domain(domain))
    }

    /// Watches an IPv4 or IPv6 address.
    ///
    /// - Throws: ``ReachabilityError/invalidAddress(_:)`` when `address` is not a literal of either.
    public convenience init(address: String) throws {
        guard RouteProbe.socketAddress(address) != nil else { throw ReachabilityError.invalidAddress(address) }
        self.init(target: .address(address))
    }

    private init(target: Target) {
        self.target = target
    }

    /// The current status; ``ReachabilityStatus/unknown`` until monitoring has started.
    public var status: ReachabilityStatus { state.withLock { $0.status } }
    /// The path behind ``status``: the interface in use and the families with a route; `nil` until known.
    public var path: ReachabilityPath? { state.withLock { $0.path } }
    /// Whether the target can be reached.
    public var isReachable: Bool { status.isReachable }
    /// Whether the target can be reached over a cellular-style link.
    public var isReachableViaWWAN: Bool { status == .reachableViaWWAN }
    /// Whether the target can be reached over Wi-Fi or Ethernet.
    public var isReachableViaWiFi: Bool { status == .reachableViaWiFi }

    /// Called on ``callbackQueue`` with each new status.
    public func setReachabilityStatusChangeBlock(_ block: (@Sendable (ReachabilityStatus) -> Void)?) {
        state.withLock { $0.block = block }
    }

    /// Where the status block runs and `Notification.Name.reachabilityDidChange` is posted: the main queue by
    /// default, as AFNetworking does, in the order the changes came; `nil` for a queue of the manager's own. On
    /// Linux the main queue runs only in a program with an `async` main, `dispatchMain()` or a run loop.
    /// ``statusUpdates`` needs no queue.
    public var callbackQueue: DispatchQueue? {
        get { state.withLock { $0.callbackQueue } }
        set { state.withLock { $0.callbackQueue = newValue } }
    }

    /// Each new status from now on, starting with the current one when it is known; ends when the sequence is
    /// dropped.
    public var statusUpdates: AsyncStream<ReachabilityStatus> {
        let id = UUID()
        return AsyncStream { continuation in
            let current = state.withLock { state -> ReachabilityStatus in
                state.continuations[id] = continuation
                return state.status
            }
            if current != .unknown { continuation.yield(current) }
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
            }
        }
    }

    /// Starts watching; the current status is known when this returns. Does nothing when already monitoring.
    public func startMonitoring() {
        let generation = state.withLock { state -> Int? in
            guard !state.monitoring else { return nil }
            state.monitoring = true
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        do {
            guard let source = try target.makeSource() else { return }
            let current = state.withLock { state in
                guard state.generation == generation, state.monitoring else { return false }
                state.source = source
                return true
            }
            guard current else { return }
            let path = try source.start { [weak self] path in self?.report(path, generation: generation) }
            // A stopMonitoring() that ran while the source was starting stopped it before it started.
            if state.withLock({ $0.generation != generation || !$0.monitoring }) { source.stop() }
            report(path, generation: generation)
        } catch {
            report(nil, generation: generation)
        }
    }

    /// Stops watching; the status stays as it was. Starting again afterwards reads the state anew.
    public func stopMonitoring() {
        state.withLock { state in
            state.monitoring = false
            state.source?.stop()
            state.source = nil
        }
    }

    /// Records `path` and reports its status if it changed; `nil` means the state could not be read. A reading of
    /// an earlier `startMonitoring()`'s source is dropped.
    private func report(_ path: ReachabilityPath?, generation: Int) {
        let status = path?.status ?? .unknown
        let change = state.withLock {
            state -> (
                block: (@Sendable (ReachabilityStatus) -> Void)?,
                streams: [AsyncStream<ReachabilityStatus>.Continuation], queue: DispatchQueue?
            )? in
            guard state.monitoring, state.generation == generation else { return nil }
            state.path = path
            guard state.status != status else { return nil }
            state.status = status
            return (state.block, Array(state.continuations.values), state.callbackQueue)
        }
        guard let change else { return }
        change.streams.forEach { $0.yield(status) }
        (change.queue ?? queue).async {
            NotificationCenter.default.post(
                name: .reachabilityDidChange, object: self,
                userInfo: [Self.statusUserInfoKey: NSNumber(value: status.rawValue)])
            change.block?(status)
        }
    }
}

extension Notification.Name {
    /// Posted when a ``ReachabilityManager``'s status changes (`AFNetworkingReachabilityDidChangeNotification`); the
    /// new status is under ``ReachabilityManager/statusUserInfoKey``.
    public static let reachabilityDidChange = Notification.Name("com.alamofire.networking.reachability.change")
}

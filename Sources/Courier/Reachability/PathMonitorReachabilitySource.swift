#if canImport(Network) && !os(Linux)
    import Dispatch
    import Network

    /// Reachability on Apple platforms: `NWPathMonitor` reports the system's path and every change to it. The
    /// general case is that path (its preferred interface); an address or a domain is checked as on Linux, by the
    /// route a UDP `connect` picks (nothing is sent), again at each change of the system's path.
    final class PathMonitorReachabilitySource: ReachabilitySource {
        private let target: ReachabilityManager.Target
        /// Not the manager's queue: `start` waits for the first reading, which may be called from that queue.
        private let queue = DispatchQueue(label: "Courier.ReachabilityManager.path")
        private let monitor = Locked<NWPathMonitor?>(nil)

        /// How long `start` waits for the monitor's first reading.
        private static let firstReadingTimeout = DispatchTimeInterval.seconds(2)

        init(target: ReachabilityManager.Target) {
            self.target = target
        }

        func start(changed: @escaping @Sendable (ReachabilityPath) -> Void) throws -> ReachabilityPath? {
            struct First {
                var waiting = true
                var reading: ReachabilityPath?
            }
            let first = Locked(First())
            let arrived = DispatchSemaphore(value: 0)
            let target = target
            let monitor = NWPathMonitor()
            monitor.pathUpdateHandler = { systemPath in
                let reading = Self.path(to: target, on: systemPath)
                let isFirst = first.withLock { first -> Bool in
                    guard first.waiting, first.reading == nil else { return false }
                    first.reading = reading
                    return true
                }
                if isFirst { arrived.signal() } else { changed(reading) }
            }
            self.monitor.withLock { $0 = monitor }
            monitor.start(queue: queue)
            _ = arrived.wait(timeout: .now() + Self.firstReadingTimeout)
            return first.withLock { first in
                first.waiting = false
                return first.reading
            }
        }

        func stop() {
            monitor.withLock { monitor in
                monitor?.cancel()
                monitor = nil
            }
        }

        /// The path to `target` when the system's path is `systemPath`.
        static func path(to target: ReachabilityManager.Target, on systemPath: NWPath) -> ReachabilityPath {
            let usableInterface = { (name: String) -> ReachabilityPath.Interface? in
                if let interface = systemPath.availableInterfaces.first(where: { $0.name == name }) {
                    return .init(name: interface.name, kind: kind(of: interface.type))
                }
                return name.hasPrefix("lo") ? .init(name: name, kind: .loopback) : nil
            }
            if let path = RouteProbe.path(to: target, usableInterface: usableInterface) { return path }
            guard systemPath.status == .satisfied, let interface = systemPath.availableInterfaces.first else {
                return RouteProbe.none
            }
            return ReachabilityPath(
                interface: .init(name: interface.name, kind: kind(of: interface.type)),
                supportsIPv4: systemPath.supportsIPv4, supportsIPv6: systemPath.supportsIPv6)
        }

        /// Compared rather than switched over: the framework may add kinds, which count as `other`.
        private static func kind(of type: NWInterface.InterfaceType) -> ReachabilityPath.Interface.Kind {
            if type == .wifi { return .wifi }
            if type == .cellular { return .cellular }
            if type == .wiredEthernet { return .wired }
            if type == .loopback { return .loopback }
            return .other
        }
    }
#endif

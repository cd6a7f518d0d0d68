#if os(Linux)
    import Dispatch

    /// Reachability on Linux: the path to the target read from a ``RoutingWatcher``'s table, the kernel's links and
    /// routes, anew after every batch of changes.
    final class RoutingReachabilitySource: ReachabilitySource {
        private let target: ReachabilityManager.Target
        private let queue = DispatchQueue(label: "Courier.ReachabilityManager.routing")
        private let watcher = Locked<RoutingWatcher?>(nil)

        init(target: ReachabilityManager.Target) {
            self.target = target
        }

        func start(changed: @escaping @Sendable (ReachabilityPath) -> Void) throws -> ReachabilityPath? {
            let target = target
            let watcher = try RoutingWatcher(queue: queue) { table in changed(Self.path(to: target, table: table)) }
            self.watcher.withLock { $0 = watcher }
            return Self.path(to: target, table: try watcher.start())
        }

        func stop() {
            watcher.withLock { watcher in
                watcher?.stop()
                watcher = nil
            }
        }

        /// The path to `target` in `table`.
        static func path(to target: ReachabilityManager.Target, table: RoutingTable) -> ReachabilityPath {
            let usableInterface = { (name: String) -> ReachabilityPath.Interface? in
                table.links.values.first { $0.name == name && $0.isRunning }.map { .init(name: $0.name, kind: $0.kind) }
            }
            return RouteProbe.path(to: target, usableInterface: usableInterface) ?? table.defaultPath
        }
    }
#endif

import Dispatch

/// Where a ``ReachabilityManager`` reads the path to its target: the kernel's routing table on Linux
/// (``RoutingReachabilitySource``), `NWPathMonitor` on Apple platforms (``PathMonitorReachabilitySource``).
///
/// A source is started at most once and stopped at most once; the manager makes a new one for each
/// `startMonitoring()`.
protocol ReachabilitySource: Sendable {
    /// Reads the current path, then watches for changes and calls `changed` with each new reading (not necessarily
    /// a different one: the manager drops repeats) on a queue of the source's own.
    ///
    /// - Returns: the path when this returns, or `nil` when it could not be read in time (a later reading is then
    ///   passed to `changed`).
    func start(changed: @escaping @Sendable (ReachabilityPath) -> Void) throws -> ReachabilityPath?

    /// Stops watching: `changed` is not called after this returns, except for a call already under way.
    func stop()
}

extension ReachabilityManager.Target {
    /// This platform's source for the target, or `nil` where there is none.
    func makeSource() throws -> (any ReachabilitySource)? {
        #if os(Linux)
            return RoutingReachabilitySource(target: self)
        #elseif canImport(Network)
            return PathMonitorReachabilitySource(target: self)
        #else
            return nil
        #endif
    }
}

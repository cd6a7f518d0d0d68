/// The links and routes a routing socket has reported, kept up to date message by message: what the general
/// reachability status (AFNetworking's zero address) is read from.
struct RoutingTable: Sendable, Hashable {
    private(set) var links: [Int32: NetlinkLink] = [:]
    private(set) var routes: Set<NetlinkRoute> = []

    /// Applies one message of a dump or of the change stream; others change nothing.
    mutating func apply(_ message: NetlinkMessage) {
        switch message {
        case .link(let link, let removed):
            links[link.index] = removed ? nil : link
        case .route(let route, let removed):
            if removed { routes.remove(route) } else { routes.insert(route) }
        case .done, .error, .overrun, .other:
            break
        }
    }

    /// Forgets everything, before a new dump.
    mutating func reset() {
        self = RoutingTable()
    }

    /// The path to the internet: a default route of the main table whose interface is up and running (IPv4's
    /// first), and which families have one.
    var defaultPath: ReachabilityPath {
        let usable = routes.filter { route in
            route.isDefault && route.outputInterface.flatMap { links[$0] }.map(\.isRunning) == true
        }
        let chosen =
            usable.filter { $0.family == 2 }.min { ($0.outputInterface ?? 0) < ($1.outputInterface ?? 0) }
            ?? usable.min { ($0.outputInterface ?? 0) < ($1.outputInterface ?? 0) }
        let interface = chosen.flatMap { $0.outputInterface }.flatMap { links[$0] }.map {
            ReachabilityPath.Interface(name: $0.name, kind: $0.kind)
        }
        return ReachabilityPath(
            interface: interface, supportsIPv4: usable.contains { $0.family == 2 },
            supportsIPv6: usable.contains { $0.family == 10 })
    }

    /// The interface with `index`, if it is up and running.
    func runningLink(index: Int32) -> NetlinkLink? {
        links[index].flatMap { $0.isRunning ? $0 : nil }
    }
}

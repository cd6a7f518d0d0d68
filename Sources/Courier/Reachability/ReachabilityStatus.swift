/// Whether the network (or a host) can be reached, and how (`AFNetworkReachabilityStatus`, with its raw values).
public enum ReachabilityStatus: Int, Sendable, Hashable, CustomStringConvertible {
    /// Not known yet.
    case unknown = -1
    /// No route, or the route's interface is down.
    case notReachable = 0
    /// Through a cellular-style link (PPP, raw IP).
    case reachableViaWWAN = 1
    /// Through any other link: Wi-Fi, or Ethernet, which AFNetworking reports as Wi-Fi too.
    case reachableViaWiFi = 2

    /// Whether the target can be reached, over any link.
    var isReachable: Bool { self == .reachableViaWWAN || self == .reachableViaWiFi }

    /// AFNetworking's wording: "Unknown", "Not Reachable", "Reachable via WWAN", "Reachable via WiFi".
    public var description: String {
        switch self {
        case .unknown: "Unknown"
        case .notReachable: "Not Reachable"
        case .reachableViaWWAN: "Reachable via WWAN"
        case .reachableViaWiFi: "Reachable via WiFi"
        }
    }
}

/// The way to the network in more detail than ``ReachabilityStatus``: the interface the route uses, and which
/// address families have a route.
public struct ReachabilityPath: Sendable, Hashable {
    /// A network interface, as the route names it.
    public struct Interface: Sendable, Hashable {
        /// What kind of link an interface is.
        public enum Kind: String, Sendable, Hashable {
            /// Ethernet-style links. On Linux, Wi-Fi reports the same link type and is counted here too.
            case wired
            /// Wi-Fi, where the platform tells it apart (Apple platforms).
            case wifi
            /// PPP and raw-IP links (modems), and Apple's cellular interfaces.
            case cellular
            /// The loopback interface.
            case loopback
            /// Anything else (tunnels, bridges' ports…).
            case other
        }

        /// E.g. `eth0`, `wlan0`, `en0`.
        public var name: String
        /// The kind of link.
        public var kind: Kind

        /// An interface.
        public init(name: String, kind: Kind) {
            self.name = name
            self.kind = kind
        }
    }

    /// The interface of the route in use, up and running; `nil` when there is none.
    public var interface: Interface?
    /// Whether IPv4 has a usable route.
    public var supportsIPv4: Bool
    /// Whether IPv6 has a usable route.
    public var supportsIPv6: Bool

    /// A path.
    public init(interface: Interface?, supportsIPv4: Bool, supportsIPv6: Bool) {
        self.interface = interface
        self.supportsIPv4 = supportsIPv4
        self.supportsIPv6 = supportsIPv6
    }

    /// The status this path gives: not reachable without an interface; WWAN over a cellular link; Wi-Fi
    /// otherwise, as AFNetworking reports Ethernet (and an address on this machine, reached over the loopback).
    public var status: ReachabilityStatus {
        switch interface?.kind {
        case nil: .notReachable
        case .cellular: .reachableViaWWAN
        case .wired, .wifi, .loopback, .other: .reachableViaWiFi
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether the kernel has a route to one address, found without sending anything: a UDP socket is "connected" to
/// the address (which only picks the route) and the local address it was given names the interface.
enum RouteProbe {
    /// An IPv4 or IPv6 address.
    struct Address: Sendable, Hashable {
        var family: Int32
        /// 4 or 16 bytes, in network order.
        var bytes: [UInt8]
    }

    /// The address an IPv4 or IPv6 literal names; `nil` for anything else.
    static func socketAddress(_ literal: String) -> Address? {
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            return Address(family: AF_INET, bytes: withUnsafeBytes(of: &v4) { Array($0) })
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            return Address(family: AF_INET6, bytes: withUnsafeBytes(of: &v6) { Array($0) })
        }
        return nil
    }

    /// The addresses `host` resolves to (blocking: call it off Swift concurrency's threads).
    static func resolve(_ host: String) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        #else
            hints.ai_socktype = SOCK_DGRAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr, let parsed = Self.address(of: address) {
                if !addresses.contains(parsed) { addresses.append(parsed) }
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }

    /// The path the kernel would take to `address`: the interface of its route, as `usableInterface` describes it
    /// when that interface is up and running (it returns `nil` otherwise), else none.
    static func path(
        to address: Address, usableInterface: (String) -> ReachabilityPath.Interface?
    ) -> ReachabilityPath {
        let descriptor = socket(address.family, datagramType, 0)
        guard descriptor >= 0 else { return none }
        defer { close(descriptor) }
        var storage = sockaddr_storage()
        let length = Self.fill(&storage, with: address, port: 9)
        let connected = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, length) }
        }
        guard connected == 0 else { return none }
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &localLength) }
        }
        guard named == 0,
            let source = withUnsafePointer(
                to: &local,
                {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Self.address(of: $0) }
                }),
            let name = interfaceName(of: source),
            let interface = usableInterface(name)
        else { return none }
        return ReachabilityPath(
            interface: interface, supportsIPv4: address.family == AF_INET, supportsIPv6: address.family == AF_INET6)
    }

    /// The first of `addresses` with a usable route, or none: a domain's path.
    static func path(
        toAny addresses: [Address], usableInterface: (String) -> ReachabilityPath.Interface?
    ) -> ReachabilityPath {
        for address in addresses {
            let path = path(to: address, usableInterface: usableInterface)
            if path.interface != nil { return path }
        }
        return none
    }

    /// The path to an address or a domain target; `nil` for the general case, which each platform reads its own way.
    static func path(
        to target: ReachabilityManager.Target, usableInterface: (String) -> ReachabilityPath.Interface?
    ) -> ReachabilityPath? {
        switch target {
        case .internet:
            return nil
        case .address(let literal):
            return socketAddress(literal).map { path(to: $0, usableInterface: usableInterface) } ?? none
        case .domain(let host):
            return path(toAny: resolve(host), usableInterface: usableInterface)
        }
    }

    /// No usable route.
    static let none = ReachabilityPath(interface: nil, supportsIPv4: false, supportsIPv6: false)

    /// A datagram socket's type, closed on `exec` where the flag exists.
    private static var datagramType: Int32 {
        #if canImport(Glibc)
            Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            SOCK_DGRAM
        #endif
    }

    /// The interface that holds `address`.
    private static func interfaceName(of address: Address) -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entry = list
        while let current = entry {
            if let candidate = current.pointee.ifa_addr, Self.address(of: candidate) == address,
                let name = current.pointee.ifa_name
            {
                return String(cString: name)
            }
            entry = current.pointee.ifa_next
        }
        return nil
    }

    /// The address in a `sockaddr_in` or `sockaddr_in6`.
    private static func address(of socketAddress: UnsafePointer<sockaddr>) -> Address? {
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            return socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                var bytes = $0.pointee.sin_addr
                return Address(family: AF_INET, bytes: withUnsafeBytes(of: &bytes) { Array($0) })
            }
        case AF_INET6:
            return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                var bytes = $0.pointee.sin6_addr
                return Address(family: AF_INET6, bytes: withUnsafeBytes(of: &bytes) { Array($0) })
            }
        default:
            return nil
        }
    }

    /// Writes `address` with `port` into `storage`; returns the length to pass with it.
    private static func fill(_ storage: inout sockaddr_storage, with address: Address, port: UInt16) -> socklen_t {
        withUnsafeMutableBytes(of: &storage) { raw -> socklen_t in
            if address.family == AF_INET {
                var value = sockaddr_in()
                #if canImport(Darwin)
                    value.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
                #endif
                value.sin_family = sa_family_t(AF_INET)
                value.sin_port = port.bigEndian
                withUnsafeMutableBytes(of: &value.sin_addr) { $0.copyBytes(from: address.bytes) }
                withUnsafeBytes(of: &value) { raw.copyMemory(from: $0) }
                return socklen_t(MemoryLayout<sockaddr_in>.size)
            }
            var value = sockaddr_in6()
            #if canImport(Darwin)
                value.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size)
            #endif
            value.sin6_family = sa_family_t(AF_INET6)
            value.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &value.sin6_addr) { $0.copyBytes(from: address.bytes) }
            withUnsafeBytes(of: &value) { raw.copyMemory(from: $0) }
            return socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
    }
}

/// The few declarations of the kernel's routing-socket headers that reachability needs, which Glibc's Swift module
/// does not export: `linux/netlink.h` (`struct nlmsghdr`, `NLMSG_*`), `linux/rtnetlink.h` (`struct rtmsg`,
/// `struct rtattr`, `RTM_*`, `RTA_*`, `RTMGRP_*`, `RT_TABLE_MAIN`, `RTN_UNICAST`), `linux/if_link.h`
/// (`struct ifinfomsg`, `IFLA_IFNAME`), `linux/if.h` (`IFF_UP`, `IFF_RUNNING`) and `linux/if_arp.h` (`ARPHRD_*`).
///
/// Netlink messages are in the host's byte order; every platform Swift runs on here is little-endian.
enum Netlink {
    // linux/netlink.h
    static let headerLength = 16  // sizeof(struct nlmsghdr)
    static let messageDone: UInt16 = 3  // NLMSG_DONE
    static let messageError: UInt16 = 2  // NLMSG_ERROR
    static let messageOverrun: UInt16 = 4  // NLMSG_OVERRUN
    static let flagRequest: UInt16 = 0x1  // NLM_F_REQUEST
    static let flagDump: UInt16 = 0x300  // NLM_F_ROOT | NLM_F_MATCH

    // linux/rtnetlink.h
    static let newLink: UInt16 = 16  // RTM_NEWLINK
    static let deleteLink: UInt16 = 17  // RTM_DELLINK
    static let getLink: UInt16 = 18  // RTM_GETLINK
    static let newRoute: UInt16 = 24  // RTM_NEWROUTE
    static let deleteRoute: UInt16 = 25  // RTM_DELROUTE
    static let getRoute: UInt16 = 26  // RTM_GETROUTE
    static let routeMessageLength = 12  // sizeof(struct rtmsg)
    static let attributeDestination: UInt16 = 1  // RTA_DST
    static let attributeOutputInterface: UInt16 = 4  // RTA_OIF
    static let attributeTable: UInt16 = 15  // RTA_TABLE
    static let tableMain: UInt32 = 254  // RT_TABLE_MAIN
    static let routeTypeUnicast: UInt8 = 1  // RTN_UNICAST
    /// RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE.
    static let groups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400

    // linux/if_link.h
    static let linkMessageLength = 16  // sizeof(struct ifinfomsg)
    static let attributeInterfaceName: UInt16 = 3  // IFLA_IFNAME

    // linux/if.h
    static let interfaceUp: UInt32 = 0x1  // IFF_UP
    static let interfaceRunning: UInt32 = 0x40  // IFF_RUNNING

    // linux/if_arp.h
    static let linkEthernet: UInt16 = 1  // ARPHRD_ETHER
    static let linkPPP: UInt16 = 512  // ARPHRD_PPP
    static let linkRawIP: UInt16 = 519  // ARPHRD_RAWIP
    static let linkLoopback: UInt16 = 772  // ARPHRD_LOOPBACK
    static let linkNone: UInt16 = 65534  // ARPHRD_NONE
}

/// A link (network interface) as a routing socket reports it.
struct NetlinkLink: Sendable, Hashable {
    var index: Int32
    var name: String
    /// `ARPHRD_*`.
    var type: UInt16
    /// `IFF_*`.
    var flags: UInt32

    /// Up and with a carrier: after a carrier loss the routes stay, but the link is not running.
    var isRunning: Bool {
        flags & (Netlink.interfaceUp | Netlink.interfaceRunning) == Netlink.interfaceUp | Netlink.interfaceRunning
    }

    /// The kind of link, from its type: Ethernet (and Wi-Fi, which reports the same type) is wired; PPP and raw
    /// IP are cellular-style.
    var kind: ReachabilityPath.Interface.Kind {
        switch type {
        case Netlink.linkEthernet: .wired
        case Netlink.linkLoopback: .loopback
        case Netlink.linkPPP, Netlink.linkRawIP, Netlink.linkNone: .cellular
        default: .other
        }
    }
}

/// A route as a routing socket reports it.
struct NetlinkRoute: Sendable, Hashable {
    /// `AF_INET` (2) or `AF_INET6` (10).
    var family: UInt8
    var destination: [UInt8]
    var destinationLength: UInt8
    var table: UInt32
    /// `RTN_*`.
    var type: UInt8
    var outputInterface: Int32?

    /// A default route of the main table: where traffic to the internet goes.
    var isDefault: Bool {
        destinationLength == 0 && table == Netlink.tableMain && type == Netlink.routeTypeUnicast
    }
}

/// One message of a routing socket, parsed.
enum NetlinkMessage: Sendable, Hashable {
    case link(NetlinkLink, removed: Bool)
    case route(NetlinkRoute, removed: Bool)
    /// The end of a dump.
    case done
    /// An error answer, with the (negative) errno.
    case error(Int32)
    /// The kernel dropped messages (the socket's buffer overflowed): dump again.
    case overrun
    /// A message reachability does not need (addresses, neighbours…), by type.
    case other(UInt16)
}

/// Why bytes from a routing socket could not be parsed.
enum NetlinkParseError: Error, Hashable {
    /// A message or attribute claims more bytes than there are, or fewer than its header.
    case truncated(offset: Int)
}

extension NetlinkMessage {
    /// Every message in `bytes` (one datagram); throws on a truncated or malformed message instead of reading past
    /// it.
    static func parse(_ bytes: [UInt8]) throws -> [NetlinkMessage] {
        var messages: [NetlinkMessage] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= Netlink.headerLength else {
                throw NetlinkParseError.truncated(offset: offset)
            }
            let length = Int(bytes.uint32(at: offset))
            let type = bytes.uint16(at: offset + 4)
            guard length >= Netlink.headerLength, length <= bytes.count - offset else {
                throw NetlinkParseError.truncated(offset: offset)
            }
            let payload = (offset + Netlink.headerLength)..<(offset + length)
            messages.append(try message(type: type, payload: payload, in: bytes))
            offset += (length + 3) & ~3
        }
        return messages
    }

    private static func message(type: UInt16, payload: Range<Int>, in bytes: [UInt8]) throws -> NetlinkMessage {
        switch type {
        case Netlink.messageDone:
            return .done
        case Netlink.messageOverrun:
            return .overrun
        case Netlink.messageError:
            guard payload.count >= 4 else { throw NetlinkParseError.truncated(offset: payload.lowerBound) }
            return .error(Int32(bitPattern: bytes.uint32(at: payload.lowerBound)))
        case Netlink.newLink, Netlink.deleteLink:
            return .link(try link(payload, in: bytes), removed: type == Netlink.deleteLink)
        case Netlink.newRoute, Netlink.deleteRoute:
            return .route(try route(payload, in: bytes), removed: type == Netlink.deleteRoute)
        default:
            return .other(type)
        }
    }

    private static func link(_ payload: Range<Int>, in bytes: [UInt8]) throws -> NetlinkLink {
        guard payload.count >= Netlink.linkMessageLength else {
            throw NetlinkParseError.truncated(offset: payload.lowerBound)
        }
        let start = payload.lowerBound
        var link = NetlinkLink(
            index: Int32(bitPattern: bytes.uint32(at: start + 4)), name: "", type: bytes.uint16(at: start + 2),
            flags: bytes.uint32(at: start + 8))
        try attributes((start + Netlink.linkMessageLength)..<payload.upperBound, in: bytes) { type, value in
            if type == Netlink.attributeInterfaceName {
                link.name = String(decoding: bytes[value].prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return link
    }

    private static func route(_ payload: Range<Int>, in bytes: [UInt8]) throws -> NetlinkRoute {
        guard payload.count >= Netlink.routeMessageLength else {
            throw NetlinkParseError.truncated(offset: payload.lowerBound)
        }
        let start = payload.lowerBound
        var route = NetlinkRoute(
            family: bytes[start], destination: [], destinationLength: bytes[start + 1],
            table: UInt32(bytes[start + 4]), type: bytes[start + 7], outputInterface: nil)
        try attributes((start + Netlink.routeMessageLength)..<payload.upperBound, in: bytes) { type, value in
            switch type {
            case Netlink.attributeDestination:
                route.destination = Array(bytes[value])
            case Netlink.attributeOutputInterface where value.count >= 4:
                route.outputInterface = Int32(bitPattern: bytes.uint32(at: value.lowerBound))
            case Netlink.attributeTable where value.count >= 4:
                route.table = bytes.uint32(at: value.lowerBound)
            default:
                break
            }
        }
        return route
    }

    /// Calls `body` with each `struct rtattr`'s type and value range in `range`.
    private static func attributes(
        _ range: Range<Int>, in bytes: [UInt8], _ body: (UInt16, Range<Int>) -> Void
    ) throws {
        var offset = range.lowerBound
        while range.upperBound - offset >= 4 {
            let length = Int(bytes.uint16(at: offset))
            guard length >= 4, length <= range.upperBound - offset else {
                throw NetlinkParseError.truncated(offset: offset)
            }
            body(bytes.uint16(at: offset + 2) & 0x3FFF, (offset + 4)..<(offset + length))
            offset += (length + 3) & ~3
        }
    }
}

extension [UInt8] {
    /// The little-endian `UInt16` at `offset`; the caller has checked the bounds.
    fileprivate func uint16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    /// The little-endian `UInt32` at `offset`; the caller has checked the bounds.
    fileprivate func uint32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16
            | UInt32(self[offset + 3]) << 24
    }
}

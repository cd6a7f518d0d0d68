#if os(Linux)
    import Glibc

    /// A `NETLINK_ROUTE` socket subscribed to link, address and route changes of IPv4 and IPv6, which also answers
    /// dumps of the links and routes.
    ///
    /// The descriptor is owned by this object and closed when it goes away; reads and writes of it are serialized by
    /// its one user (``RoutingWatcher``'s queue, or the thread starting it before that queue reads).
    final class NetlinkSocket: Sendable {
        /// `struct sockaddr_nl` (linux/netlink.h), 12 bytes.
        private struct Address {
            var family: UInt16
            var padding: UInt16 = 0
            var portID: UInt32 = 0
            var groups: UInt32
        }

        let descriptor: Int32

        /// Opens the socket and joins the change groups.
        ///
        /// - Throws: ``ReachabilityError/system(_:_:)`` when the kernel refuses.
        init() throws {
            let descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw ReachabilityError.system("socket(AF_NETLINK)", errno) }
            var address = Address(family: UInt16(AF_NETLINK), groups: Netlink.groups)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<Address>.size))
                }
            }
            guard bound == 0 else {
                let code = errno
                close(descriptor)
                throw ReachabilityError.system("bind(AF_NETLINK)", code)
            }
            // Room for a burst of changes (an interface going down withdraws many routes at once).
            var size: Int32 = 1 << 20
            _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            self.descriptor = descriptor
        }

        deinit {
            close(descriptor)
        }

        /// Asks for every link (`RTM_GETLINK`) or every route (`RTM_GETROUTE`) of both families.
        func requestDump(of type: UInt16, sequence: UInt32) throws {
            let body = type == Netlink.getLink ? Netlink.linkMessageLength : Netlink.routeMessageLength
            var message = [UInt8](repeating: 0, count: Netlink.headerLength + body)
            Self.put(UInt32(message.count), at: 0, in: &message)
            // nlmsg_type, then nlmsg_flags.
            Self.put(UInt32(Netlink.flagRequest | Netlink.flagDump) << 16 | UInt32(type), at: 4, in: &message)
            Self.put(sequence, at: 8, in: &message)
            let sent = message.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard sent == message.count else { throw ReachabilityError.system("send(RTM_GETLINK/GETROUTE)", errno) }
        }

        /// What receiving gave.
        enum Received {
            case datagram([UInt8])
            /// Nothing is waiting (or, when waiting, nothing came in time).
            case nothing
            /// The kernel dropped messages because the buffer was full: the state must be dumped again.
            case overflow
        }

        /// One datagram; waits up to `timeout` milliseconds for one when `timeout` is positive.
        func receive(waitingUpTo timeout: Int32 = 0) throws -> Received {
            if timeout > 0 {
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let polled = poll(&ready, 1, timeout)
                if polled == 0 { return .nothing }
                if polled < 0 { return errno == EINTR ? .nothing : .overflow }
            }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count > 0 { return .datagram(Array(buffer.prefix(count))) }
            switch errno {
            case EAGAIN, EINTR: return .nothing
            case ENOBUFS: return .overflow
            default: throw ReachabilityError.system("recv(AF_NETLINK)", errno)
            }
        }

        private static func put(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
            for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        }
    }
#endif

#if os(Linux)
    import Dispatch
    import Glibc

    /// Keeps a ``RoutingTable`` current from a ``NetlinkSocket``: a dump of the links and routes at start, then every
    /// change as the kernel reports it, read on `queue` by a dispatch source (no thread of Swift concurrency or of an
    /// event loop waits for the socket). When the kernel reports that it dropped messages, everything is dumped again.
    final class RoutingWatcher: Sendable {
        private struct State {
            var table = RoutingTable()
            var sequence: UInt32 = 0
            /// The read source; touched only while starting and stopping, and by its own handler on `queue`.
            var source: (any DispatchSourceRead)?
        }

        private let socket: NetlinkSocket
        private let state = Locked(State())
        private let queue: DispatchQueue
        private let changed: @Sendable (RoutingTable) -> Void

        /// A watcher that calls `changed` on `queue` after each batch of changes.
        init(queue: DispatchQueue, changed: @escaping @Sendable (RoutingTable) -> Void) throws {
            socket = try NetlinkSocket()
            self.queue = queue
            self.changed = changed
        }

        /// Dumps the links and routes, waiting for the answers, then watches for changes; returns the table.
        func start() throws -> RoutingTable {
            let table = try dump()
            let source = DispatchSource.makeReadSource(fileDescriptor: socket.descriptor, queue: queue)
            source.setEventHandler { [weak self] in self?.readAvailable() }
            // The descriptor must stay open until the source is cancelled: the handler keeps the socket alive.
            let socket = socket
            source.setCancelHandler { withExtendedLifetime(socket) {} }
            state.withLock { $0.source = source }
            source.resume()
            return table
        }

        /// Stops watching; the socket closes when the watcher goes away.
        func stop() {
            state.withLock { state in
                state.source?.cancel()
                state.source = nil
            }
        }

        /// The links, then the routes, each dump read to its end; changes that arrive meanwhile are applied in order.
        private func dump() throws -> RoutingTable {
            for _ in 0..<3 {
                var table = RoutingTable()
                var overflowed = false
                dumps: for type in [Netlink.getLink, Netlink.getRoute] {
                    let sequence = state.withLock { state -> UInt32 in
                        state.sequence &+= 1
                        return state.sequence
                    }
                    try socket.requestDump(of: type, sequence: sequence)
                    var done = false
                    while !done {
                        switch try socket.receive(waitingUpTo: 2000) {
                        case .nothing:
                            throw ReachabilityError.system("no answer to the routing dump", ETIMEDOUT)
                        case .overflow:
                            overflowed = true
                            break dumps
                        case .datagram(let bytes):
                            for message in (try? NetlinkMessage.parse(bytes)) ?? [] {
                                if message == .done { done = true }
                                if message == .overrun { overflowed = true }
                                table.apply(message)
                            }
                        }
                    }
                }
                if !overflowed {
                    state.withLock { $0.table = table }
                    return table
                }
            }
            throw ReachabilityError.system("the routing dump kept overflowing", ENOBUFS)
        }

        /// Reads every datagram waiting, applies it, and reports the table once.
        private func readAvailable() {
            var overflowed = false
            var received = false
            reading: while true {
                switch (try? socket.receive()) ?? .nothing {
                case .nothing:
                    break reading
                case .overflow:
                    overflowed = true
                case .datagram(let bytes):
                    received = true
                    // A datagram that does not parse is skipped: the kernel's next message or dump corrects the table.
                    let messages = (try? NetlinkMessage.parse(bytes)) ?? []
                    if messages.contains(.overrun) { overflowed = true }
                    state.withLock { state in messages.forEach { state.table.apply($0) } }
                }
            }
            if overflowed { _ = try? dump() }
            guard received || overflowed else { return }
            changed(state.withLock { $0.table })
        }
    }
#endif

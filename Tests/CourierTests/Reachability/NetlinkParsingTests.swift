import Foundation
import Testing

@testable import Courier

/// Parsing routing-socket messages captured from a real kernel, and the status the routing table gives.
struct NetlinkParsingTests {
    private func table(_ datagrams: [UInt8]...) throws -> RoutingTable {
        var table = RoutingTable()
        for datagram in datagrams {
            for message in try NetlinkMessage.parse(datagram) { table.apply(message) }
        }
        return table
    }

    @Test("A dump of links names each interface with its type and flags, and ends with done")
    func links() throws {
        let messages = try NetlinkMessage.parse(NetlinkFixtures.upLinks)
        #expect(messages.last == .done)
        let links = messages.compactMap { message -> NetlinkLink? in
            if case .link(let link, removed: false) = message { return link }
            return nil
        }
        #expect(Set(links.map(\.name)) == ["lo", "v0", "v1"])
        let loopback = try #require(links.first { $0.name == "lo" })
        #expect(loopback.kind == .loopback && loopback.isRunning)
        let veth = try #require(links.first { $0.name == "v0" })
        #expect(veth.kind == .wired && veth.isRunning)
    }

    @Test("A default route over a running link is reachable via WiFi (AFNetworking's name for Ethernet)")
    func defaultRoute() throws {
        let up = try table(NetlinkFixtures.upLinks, NetlinkFixtures.upRoutes4, NetlinkFixtures.upRoutes6)
        let path = up.defaultPath
        #expect(path.interface == ReachabilityPath.Interface(name: "v0", kind: .wired))
        #expect(path.supportsIPv4)
        #expect(!path.supportsIPv6)
        #expect(path.status == .reachableViaWiFi)
        #expect(path.status.description == "Reachable via WiFi")
    }

    @Test("After a carrier loss the default route stays but the link is not running: not reachable")
    func carrierLoss() throws {
        let down = try table(NetlinkFixtures.peerDownLinks, NetlinkFixtures.peerDownRoutes4)
        #expect(down.routes.contains { $0.isDefault })
        #expect(down.defaultPath.interface == nil)
        #expect(down.defaultPath.status == .notReachable)
    }

    @Test("Without a default route: not reachable; a deleted route message removes it")
    func noDefaultRoute() throws {
        let none = try table(NetlinkFixtures.upLinks, NetlinkFixtures.noRouteRoutes4)
        #expect(none.defaultPath.status == .notReachable)
        // The captured default route, replayed as RTM_DELROUTE (type 25 instead of 24).
        var up = try table(NetlinkFixtures.upLinks, NetlinkFixtures.upRoutes4)
        let deletions = try NetlinkMessage.parse(NetlinkFixtures.upRoutes4).map { message -> NetlinkMessage in
            if case .route(let route, removed: false) = message { return .route(route, removed: true) }
            return message
        }
        deletions.forEach { up.apply($0) }
        #expect(up.defaultPath.status == .notReachable)
        #expect(up.routes.isEmpty)
    }

    @Test("Statuses have AFNetworking's raw values and wording")
    func statuses() {
        #expect(ReachabilityStatus.allCasesInOrder.map(\.rawValue) == [-1, 0, 1, 2])
        #expect(
            ReachabilityStatus.allCasesInOrder.map(\.description) == [
                "Unknown", "Not Reachable", "Reachable via WWAN", "Reachable via WiFi",
            ])
        #expect(
            ReachabilityPath(interface: .init(name: "ppp0", kind: .cellular), supportsIPv4: true, supportsIPv6: false)
                .status == .reachableViaWWAN)
    }

    @Test("Truncated or malformed messages are an error, never a crash or a read past the end")
    func malformed() throws {
        let valid = NetlinkFixtures.upRoutes4
        for cut in [1, 15, 16, 20, valid.count - 1] {
            #expect(throws: NetlinkParseError.self) { try NetlinkMessage.parse(Array(valid.prefix(cut))) }
        }
        var tooLong = valid
        tooLong[0] = 0xFF
        tooLong[1] = 0xFF
        #expect(throws: NetlinkParseError.self) { try NetlinkMessage.parse(tooLong) }
        var tooShort = valid
        tooShort[0] = 8
        tooShort[1] = 0
        #expect(throws: NetlinkParseError.self) { try NetlinkMessage.parse(tooShort) }
        // The first attribute after the 12-byte rtmsg claims a length of 2.
        var badAttribute = valid
        badAttribute[Netlink.headerLength + Netlink.routeMessageLength] = 2
        #expect(throws: NetlinkParseError.self) { try NetlinkMessage.parse(badAttribute) }
        #expect(try NetlinkMessage.parse([]) == [])
    }

    @Test("Random and mutated bytes never crash the parser", .cpuBound)
    func fuzz() async {
        var generator = SeededGenerator(seed: 0x4E4C)
        let samples = [NetlinkFixtures.upLinks, NetlinkFixtures.upRoutes4, NetlinkFixtures.upRoutes6]
        for round in 0..<1500 {
            // The suite shares two pool threads; a synchronous loop would hold one for its whole run.
            if round % 100 == 0 { await Task.yield() }
            var bytes = samples[round % samples.count]
            for _ in 0..<(1 + round % 8) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if round % 5 == 0 { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator))) }
            _ = try? NetlinkMessage.parse(bytes)
        }
    }
}

extension ReachabilityStatus {
    fileprivate static let allCasesInOrder: [ReachabilityStatus] = [
        .unknown, .notReachable, .reachableViaWWAN, .reachableViaWiFi,
    ]
}

/// ``ReachabilityManager``'s API on this machine's own routing table (read only). Serialized: one test counts the
/// routing sockets the process holds.
@Suite(.serialized)
struct ReachabilityManagerTests {
    @Test("An invalid address literal is a thrown error; IPv4 and IPv6 literals are accepted")
    func addresses() throws {
        #expect(throws: ReachabilityError.invalidAddress("300.1.1.1")) { try ReachabilityManager(address: "300.1.1.1") }
        #expect(throws: ReachabilityError.invalidAddress("example.org")) {
            try ReachabilityManager(address: "example.org")
        }
        #expect(try ReachabilityManager(address: "192.0.2.1").target == .address("192.0.2.1"))
        #expect(try ReachabilityManager(address: "2001:db8::1").target == .address("2001:db8::1"))
    }

    #if os(Linux)
        @Test("The status is known when startMonitoring() returns; start and stop are idempotent, and restart works")
        func startAndStop() async throws {
            let manager = ReachabilityManager()
            #expect(manager.status == .unknown)
            manager.startMonitoring()
            manager.startMonitoring()
            #expect(manager.status != .unknown)
            #expect(manager.path != nil)
            let first = manager.status
            manager.stopMonitoring()
            manager.stopMonitoring()
            manager.startMonitoring()
            #expect(manager.status == first)
            var updates = manager.statusUpdates.makeAsyncIterator()
            #expect(await updates.next() == first)
            let local = try ReachabilityManager(address: "127.0.0.1")
            local.startMonitoring()
            #expect(local.status == .reachableViaWiFi)
            #expect(local.path?.interface?.kind == .loopback)
            local.stopMonitoring()
            manager.stopMonitoring()
        }

        @Test("A domain is reachable through the route to an address it resolves to")
        func domain() {
            let manager = ReachabilityManager(domain: "localhost")
            manager.startMonitoring()
            #expect(manager.status == .reachableViaWiFi)
            #expect(manager.path?.interface?.kind == .loopback)
            manager.stopMonitoring()
        }

        @Test("Starting and stopping from many threads at once leaves no routing socket open")
        func concurrentStartAndStop() async throws {
            /// The process's `NETLINK_ROUTE` sockets: descriptors whose socket inode /proc/net/netlink lists with
            /// protocol 0.
            func openDescriptors() -> Int {
                let table = (try? String(contentsOfFile: "/proc/net/netlink", encoding: .utf8)) ?? ""
                let routing = Set(
                    table.split(separator: "\n").dropFirst().compactMap { line -> String? in
                        let fields = line.split(separator: " ")
                        return fields.count >= 10 && fields[1] == "0" ? "socket:[\(fields[9])]" : nil
                    })
                let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                return descriptors.filter {
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))
                        .map(routing.contains) ?? false
                }.count
            }
            let manager = ReachabilityManager()
            let before = openDescriptors()
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        if index.isMultiple(of: 2) { manager.startMonitoring() } else { manager.stopMonitoring() }
                    }
                }
            }
            manager.startMonitoring()
            #expect(manager.status != .unknown)
            #expect(openDescriptors() > before)
            manager.stopMonitoring()
            // A stopped dispatch source closes its socket on its queue, just after.
            try await waitUntil(timeout: .seconds(5)) { openDescriptors() <= before }
        }
    #endif
}

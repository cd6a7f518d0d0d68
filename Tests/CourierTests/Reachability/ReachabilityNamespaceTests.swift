import Foundation
import Testing

@testable import Courier

/// ``ReachabilityManager`` on Linux, through `courier reachability`, in a private network namespace made with
/// `unshare -rn` (no root, and the host's interfaces are never touched): a veth pair comes up, gets a default route,
/// loses its carrier, gets it back, and loses the route, and each change of status arrives once, in order, soon
/// after its step.
@Suite(.timeLimit(.minutes(1)))
struct ReachabilityNamespaceTests {
    /// A line of the namespace's output and when the test read it.
    private struct Line: Sendable {
        var text: String
        var at: ContinuousClock.Instant
    }

    private static let unshare = ["/usr/bin/unshare", "/bin/unshare"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test(.enabled(if: unshare != nil, "unshare(1) is not installed"))
    func statusesFollowTheRoutingTable() async throws {
        let courier = try CourierProcess.executable().path
        let script = """
            set -e
            ip link set lo up
            ip link add v0 type veth peer name v1
            '\(courier)' reachability --watch --json &
            WATCH=$!
            sleep 1; echo "STEP address"; ip addr add 10.9.0.1/24 dev v0; ip link set v0 up; ip link set v1 up
            sleep 1; echo "STEP route"; ip route add default via 10.9.0.2 dev v0
            sleep 1; echo "STEP carrier-lost"; ip link set v1 down
            sleep 1; echo "STEP carrier-back"; ip link set v1 up
            sleep 1; echo "STEP no-route"; ip route del default
            sleep 1
            set +e
            '\(courier)' reachability 10.9.0.7 --json; echo "ON-LINK $?"
            '\(courier)' reachability 192.0.2.1 --json; echo "OFF-LINK $?"
            kill $WATCH
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.unshare))
        process.arguments = ["-rn", "sh", "-c", script]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        let lines = Locked([Line]())
        let finished = Locked(false)
        let reader = output.fileHandleForReading
        // A blocking read on a thread of its own, as `CourierProcess` reads: Foundation's `readabilityHandler`
        // leaves a dispatch source on a descriptor that is closed when the pipe goes away, which crashes libdispatch.
        Thread.detachNewThread {
            var pending = ""
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                let now = ContinuousClock.now
                pending += String(decoding: data, as: UTF8.self)
                var parts = pending.components(separatedBy: "\n")
                pending = parts.removeLast()
                lines.withLock { $0 += parts.map { Line(text: $0, at: now) } }
            }
            finished.withLock { $0 = true }
        }
        try process.run()
        try await waitUntil(timeout: .seconds(30)) { !process.isRunning }
        // The script's last line, not the pipe's end: a process another test starts meanwhile may inherit the
        // pipe's write end (Foundation's pipes are not close-on-exec) and keep it open long after the script ends.
        try await waitUntil(timeout: .seconds(10)) {
            finished.value || lines.value.contains { $0.text.hasPrefix("OFF-LINK") }
        }
        #expect(process.terminationStatus == 0)
        let seen = lines.value
        let texts = seen.map(\.text)
        // The watch: the state before the first step, then one line per change, none repeated.
        let expected: [(after: String?, status: String, interface: String)] = [
            (nil, "notReachable", "null"),
            ("STEP route", "reachableViaWiFi", "\"v0\""),
            ("STEP carrier-lost", "notReachable", "null"),
            ("STEP carrier-back", "reachableViaWiFi", "\"v0\""),
            ("STEP no-route", "notReachable", "null"),
        ]
        let statuses = seen.filter { $0.text.hasPrefix("{") && !$0.text.contains("10.9") }
        let watched = Array(statuses.prefix(expected.count))
        #expect(watched.count == expected.count, "\(texts)")
        for (line, want) in zip(watched, expected) {
            #expect(line.text.contains("\"status\":\"\(want.status)\""), "\(line.text) in \(texts)")
            #expect(line.text.contains("\"interface\":\(want.interface)"), "\(line.text) in \(texts)")
            guard let step = want.after else { continue }
            let marker = try #require(seen.first { $0.text == step }, "\(texts)")
            #expect(line.at >= marker.at && line.at - marker.at < .milliseconds(500), "\(step): \(line.at - marker.at)")
        }
        // The address step changed nothing the general case sees: no line between it and the route step.
        let addressIndex = try #require(texts.firstIndex(of: "STEP address"))
        let routeIndex = try #require(texts.firstIndex(of: "STEP route"))
        #expect(!texts[addressIndex..<routeIndex].contains { $0.hasPrefix("{") })
        // Without a default route, an address on the veth's subnet is still reachable; one off it is not.
        #expect(texts.contains("ON-LINK 0"), "\(texts)")
        #expect(texts.contains("OFF-LINK 1"), "\(texts)")
    }
}

import ArgumentParser
import Courier
import Foundation

/// `courier reachability [HOST|ADDRESS] [--watch] [--json]`: whether the internet (or a host, or an address) can be
/// reached, from the system's routing table; nothing is sent.
struct ReachabilityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachability",
        abstract: "Print whether the internet, a host or an address can be reached (nothing is sent).",
        discussion: """
            Without --watch, prints the status and exits 0 when reachable, 1 when not. With --watch, prints the
            current status, then one line per change until interrupted. With --json, each line is one JSON object:
            {"status": "reachableViaWiFi", "interface": "eth0", "kind": "wired"} ("interface" is null when none).
            """)

    @Argument(help: "A host name or an IPv4/IPv6 address; the general case (any route to the internet) when omitted.")
    var target: String?

    @Flag(help: "Keep printing a line for each change until interrupted.")
    var watch = false

    @Flag(help: "Print each status as a JSON object.")
    var json = false

    func run() async throws {
        let console = Console.standard(environment: ProcessInfo.processInfo.environment, forceProgress: false)
        let manager: ReachabilityManager
        if let target {
            manager = (try? ReachabilityManager(address: target)) ?? ReachabilityManager(domain: target)
        } else {
            manager = ReachabilityManager()
        }
        manager.startMonitoring()
        let updates = manager.statusUpdates
        console.out(line(manager))
        try await console.flush()
        guard watch else {
            if !manager.isReachable { throw CommandFailure(.failure, "") }
            return
        }
        for await _ in updates.dropFirst(manager.status == .unknown ? 0 : 1) {
            console.out(line(manager))
            try await console.flush()
        }
    }

    /// One line for the manager's current status.
    private func line(_ manager: ReachabilityManager) -> String {
        let status = manager.status
        let interface = manager.path?.interface
        guard json else {
            let shown = interface.map { " (\(TerminalText.escape($0.name)), \($0.kind.rawValue))" } ?? ""
            return status.description + shown + "\n"
        }
        let object: [String: Any] = [
            "status": Self.caseName(status), "interface": interface?.name ?? NSNull(),
            "kind": interface?.kind.rawValue ?? NSNull(),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func caseName(_ status: ReachabilityStatus) -> String {
        switch status {
        case .unknown: "unknown"
        case .notReachable: "notReachable"
        case .reachableViaWWAN: "reachableViaWWAN"
        case .reachableViaWiFi: "reachableViaWiFi"
        }
    }
}

import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `CourierBench websocket --url ws://… --count N --size BYTES`: N text messages of BYTES bytes each way on one
/// connection through ``WebSocketTask`` (a sender task and the receiving loop run at once), against an echo
/// server; prints `seconds=…` for the N round trips, after a warm-up of 100. See `Benchmarks/websockets.sh`.
enum WebSocketBench {
    static func main(_ arguments: [String]) async throws {
        var url: URL?
        var count = 20_000
        var size = 64
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            let value = rest.popFirst()
            switch flag {
            case "--url": url = value.flatMap(URL.init(string:))
            case "--count": count = value.flatMap(Int.init) ?? count
            case "--size": size = value.flatMap(Int.init) ?? size
            default: throw BenchError(description: "unknown argument \(flag)")
            }
        }
        guard let url else { throw BenchError(description: "--url is required") }
        let manager = SessionManager(configuration: .ephemeral, transport: NIOTransport())
        defer { manager.invalidate(cancelingTasks: true) }
        let socket = manager.webSocketTask(with: URLRequest(url: url), maximumMessageSize: max(size, 1 << 20))
        let payload = String(repeating: "x", count: size)
        try await exchange(socket, payload: payload, count: 100)
        let start = ContinuousClock.now
        try await exchange(socket, payload: payload, count: count)
        let elapsed = ContinuousClock.now - start
        print("seconds=\(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)")
        await socket.cancel(with: .normalClosure)
    }

    /// Sends `count` messages while receiving their `count` echoes.
    private static func exchange(_ socket: WebSocketTask, payload: String, count: Int) async throws {
        let sender = Task {
            for _ in 0..<count { try await socket.send(.string(payload)) }
        }
        for _ in 0..<count { _ = try await socket.receive() }
        try await sender.value
    }
}

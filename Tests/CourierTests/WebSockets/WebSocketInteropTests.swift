import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``WebSocketTask`` against the `websockets` package's server, an implementation independent of NIO's.
@Suite(.timeLimit(.minutes(1)))
struct WebSocketInteropTests {
    @Test("Echo, a 1 MiB message, pings, 1,000 messages each way, and the server's close code")
    func againstPythonWebsockets() async throws {
        let server = try await PythonWebSocketServer.start()
        defer { server.stop() }
        let manager = SessionManager(configuration: .ephemeral, transport: NIOTransport())
        defer { manager.invalidate(cancelingTasks: true) }
        let socket = manager.webSocketTask(with: URLRequest(url: server.url))
        try await socket.send(.string("héllo"))
        #expect(try await socket.receive() == .string("héllo"))
        try await socket.send(.data(Data([1, 2, 3])))
        #expect(try await socket.receive() == .data(Data([1, 2, 3])))
        let big = String(repeating: "x", count: 1 << 20)
        try await socket.send(.string(big))
        #expect(try await socket.receive() == .string(big))
        try await socket.sendPing()
        let sender = Task {
            for index in 0..<1000 { try await socket.send(.string("\(index)")) }
        }
        for index in 0..<1000 {
            #expect(try await socket.receive() == .string("\(index)"))
        }
        try await sender.value
        try await socket.send(.string("close 4002 from python"))
        await #expect(throws: WebSocketClosedError.self) { try await socket.receive() }
        #expect(socket.closeCode?.rawValue == 4002)
        #expect(socket.closeReason == "from python")
    }
}

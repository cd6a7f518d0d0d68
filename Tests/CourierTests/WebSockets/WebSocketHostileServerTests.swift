import Foundation
import NIOCore
import NIOPosix
import NIOWebSocket
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``NIOTransport``'s WebSocket connection against ``HostileWebSocketServer``: a ping flood, a `101` choosing what
/// was not offered, masked frames and invalid close frames (RFC 6455 §4.1, §5.1, §5.5.3, §7.4).
@Suite(.timeLimit(.minutes(1)))
struct WebSocketHostileServerTests {
    /// A connection made by the transport itself, to see its channel.
    static func open(_ server: HostileWebSocketServer, transport: NIOTransport) async throws -> NIOWebSocketConnection {
        let connection = try await transport.openWebSocket(
            TransportRequest(method: "GET", url: server.url), configuration: WebSocketConfiguration())
        return try #require(connection as? NIOWebSocketConnection)
    }

    /// The close code of the close frame the client sent, once it has sent one.
    static func clientCloseCode(_ server: HostileWebSocketServer) async throws -> UInt16? {
        try await waitUntil { server.frames.withLock { $0.contains { $0.opcode == .connectionClose } } }
        let payload = server.frames.withLock { $0.first { $0.opcode == .connectionClose }?.payload } ?? []
        return payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
    }

    @Test("A flood of pings from a server that reads nothing costs a pong per read, for the latest ping")
    func pingFlood() async throws {
        let count = 20_000
        let server = try await HostileWebSocketServer.start(act: .pingFlood(count: count))
        let transport = NIOTransport()
        let connection = try await Self.open(server, transport: transport)
        // The flood's pings all come before `done`, so every pong the client writes for them is written by now.
        #expect(try await connection.receive() == .string("done"))
        let buffered = try await connection.channel.getOption(ChannelOptions.bufferedWritableBytes).get()
        await connection.close(code: .normalClosure, reason: "")
        _ = try await Self.clientCloseCode(server)
        let pongs = server.frames.withLock { $0.filter { $0.opcode == .pong } }
        await transport.shutdown()
        try await server.stop()

        // One pong per ping was the defect (20,000 pongs, all queued while the server read nothing). A read takes
        // up to 64 KiB, thousands of 6-byte pings, and is answered with one pong: a tenth is a generous bound.
        #expect(pongs.count >= 1)
        #expect(pongs.count <= count / 10, "\(pongs.count) pongs for \(count) pings")
        // The last pong answers the last ping (its number, 20,000).
        #expect(pongs.last?.payload == [0, 0, 0x4E, 0x20])
        // At most one pong (10 bytes) waits for the socket at any time.
        #expect(buffered < 1024, "\(buffered) bytes waiting to be written")
    }

    @Test("While its writes wait for a server that reads nothing, the connection stops reading; then reads again")
    func noReadingWhileUnwritable() async throws {
        let server = try await HostileWebSocketServer.start(act: .readNothing)
        // A loop of its own: masking 16 MiB takes a debug build's event loop long enough to hold back the
        // connections of the tests running beside this one, were it a loop of NIO's shared group.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let transport = NIOTransport(eventLoopGroup: group)
        let connection = try await Self.open(server, transport: transport)
        // More than the socket buffers hold (the server's receive buffer stays small while it reads nothing; a
        // sender's grows to 4 MiB at most): the rest waits in the channel, past its 64 KiB high-water mark.
        let size = 16 << 20
        let sender = Task { try await connection.send(.data(Data(count: size))) }
        try await Self.waitForAutoRead(false, on: connection.channel)
        server.resumeReading()
        try await sender.value
        try await Self.waitForAutoRead(true, on: connection.channel)
        try await waitUntil { server.frames.withLock { $0.count } == 1 }
        #expect(server.frames.withLock { $0.first?.payload.count } == size)
        await connection.close(code: .normalClosure, reason: "")
        await transport.shutdown()
        try await server.stop()
        try await group.shutdownGracefully()
    }

    /// Waits until the channel's `autoRead` is `value` (20 s at most).
    static func waitForAutoRead(
        _ value: Bool, on channel: any Channel, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while try await channel.getOption(ChannelOptions.autoRead).get() != value {
            guard ContinuousClock.now < deadline else {
                Issue.record("autoRead never became \(value)", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test(
        "A 101 choosing a subprotocol or an extension that was not offered fails the connection",
        arguments: [
            ([("Sec-WebSocket-Protocol", "chat")], [String]()),
            ([("Sec-WebSocket-Protocol", "superchat")], ["chat"]),
            ([("Sec-WebSocket-Protocol", "chat, superchat")], ["chat", "superchat"]),
            ([("Sec-WebSocket-Extensions", "permessage-deflate")], []),
        ])
    func unofferedChoice(headers: [(String, String)], offered: [String]) async throws {
        let server = try await HostileWebSocketServer.start(upgradeHeaders: headers, act: .write([]))
        let manager = SessionManager(configuration: .ephemeral, transport: NIOTransport())
        let socket = manager.webSocketTask(with: URLRequest(url: server.url), protocols: offered)
        let error = await thrownCourierError { try await socket.connect() }
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
        guard case .badServerResponse(let reason, _, let context) = error else {
            Issue.record("not a bad server response: \(String(describing: error))")
            return
        }
        #expect(reason.contains("not offered"), "\(reason)")
        #expect(context.response?.statusCode == 101)
    }

    @Test("A 101 choosing an offered subprotocol connects")
    func offeredChoice() async throws {
        let server = try await HostileWebSocketServer.start(
            upgradeHeaders: [("Sec-WebSocket-Protocol", "superchat")],
            act: .write(HostileWebSocketServer.frame(0x1, payload: Array("hi".utf8))))
        let manager = SessionManager(configuration: .ephemeral, transport: NIOTransport())
        let socket = manager.webSocketTask(with: URLRequest(url: server.url), protocols: ["chat", "superchat"])
        #expect(try await socket.receive() == .string("hi"))
        #expect(socket.negotiatedProtocol == "superchat")
        await socket.cancel(with: .normalClosure)
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    @Test("A masked frame from the server closes the connection with 1002 and is not delivered")
    func maskedFrame() async throws {
        let masked = HostileWebSocketServer.frame(0x1, payload: Array("hi".utf8), mask: [1, 2, 3, 4])
        let server = try await HostileWebSocketServer.start(act: .write(masked))
        let transport = NIOTransport()
        let connection = try await Self.open(server, transport: transport)
        do {
            let message = try await connection.receive()
            Issue.record("delivered: \(message)")
        } catch let closed as WebSocketClosedError {
            #expect(closed.code == .protocolError)
        }
        #expect(try await Self.clientCloseCode(server) == 1002)
        await transport.shutdown()
        try await server.stop()
    }

    /// The close frames a client must answer with 1002 (or 1007 for a reason that is not UTF-8).
    static let invalidCloses: [(frame: [UInt8], code: UInt16)] =
        [(HostileWebSocketServer.frame(0x8, payload: [0x03]), 1002)]
        + [0, 999, 1004, 1005, 1006, 1015, 2999, 5000].map { (HostileWebSocketServer.close($0), 1002) }
        + [(HostileWebSocketServer.close(1000, reason: [0x6F, 0x6B, 0xFF, 0xFE]), 1007)]

    @Test(
        "An invalid close frame is answered with 1002 (1007 for a reason that is not UTF-8)", arguments: invalidCloses)
    func invalidClose(frame: [UInt8], code: UInt16) async throws {
        let server = try await HostileWebSocketServer.start(act: .write(frame))
        let transport = NIOTransport()
        let connection = try await Self.open(server, transport: transport)
        do {
            let message = try await connection.receive()
            Issue.record("delivered: \(message)")
        } catch let closed as WebSocketClosedError {
            #expect(closed.code.rawValue == code)
        }
        #expect(try await Self.clientCloseCode(server) == code)
        await transport.shutdown()
        try await server.stop()
    }

    @Test("A valid close frame is still answered with its code", arguments: [1000, 1001, 1003, 1012, 1014, 3000, 4999])
    func validClose(code: UInt16) async throws {
        let server = try await HostileWebSocketServer.start(act: .write(HostileWebSocketServer.close(code)))
        let transport = NIOTransport()
        let connection = try await Self.open(server, transport: transport)
        await #expect(throws: WebSocketClosedError(code: WebSocketCloseCode(rawValue: code), reason: "")) {
            try await connection.receive()
        }
        #expect(try await Self.clientCloseCode(server) == code)
        await transport.shutdown()
        try await server.stop()
    }
}

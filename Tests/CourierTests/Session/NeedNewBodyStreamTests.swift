import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``SessionHooks/needNewBodyStream``: a body that can be sent once is given again by the hook when a 307, a `401`
/// challenge or a retry sends the request again (AFNetworking's `setTaskNeedNewBodyStreamBlock:`), on both
/// transports.
@Suite(.timeLimit(.minutes(1)))
struct NeedNewBodyStreamTests {
    static let payload = TestBytes.random(count: 100_000, seed: 11)

    /// A one-shot body: an async sequence of the payload in 10 KB chunks.
    static func oneShot() -> HTTPRequestBody {
        let chunks = stride(from: 0, to: payload.count, by: 10_000).map {
            payload.subdata(in: $0..<min($0 + 10_000, payload.count))
        }
        let stream = AsyncStream<Data> { continuation in
            chunks.forEach { continuation.yield($0) }
            continuation.finish()
        }
        return .stream(stream, length: Int64(payload.count))
    }

    /// POSTs a one-shot body to `path`; `asks` counts the hook's calls, which give a new body when `gives`.
    static func post(
        _ transport: String, to url: URL, gives: Bool, asks: Locked<Int>,
        configure: (inout SessionConfiguration) -> Void = { _ in }
    ) async throws -> HTTPURLResponse? {
        var configuration = SessionConfiguration.ephemeral
        configure(&configuration)
        let manager = HTTPSessionManager(configuration: configuration, transport: TestTransports.make(transport))
        manager.hooks.needNewBodyStream = { _ in
            asks.withLock { $0 += 1 }
            return gives ? Self.oneShot() : nil
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        let result = try await manager.upload(
            request, body: Self.oneShot(), serializer: HTTPResponseSerializer(acceptableStatusCodes: nil))
        manager.invalidate(cancelingTasks: true)
        return result.response
    }

    @Test(
        "A 307 is followed with a new body from the hook; without one it is delivered", arguments: TestTransports.names)
    func temporaryRedirect(transport: String) async throws {
        let server = try await ScriptedServer.start { _, received in
            received.path == "/start"
                ? .init(status: 307, headers: [("Location", "/moved")], body: "") : .init(status: 200, body: "arrived")
        }
        let asks = Locked(0)
        let followed = try await Self.post(transport, to: server.url("start"), gives: true, asks: asks)
        #expect(followed?.statusCode == 200)
        #expect(asks.value == 1)
        let moved = server.received.filter { $0.path == "/moved" }
        #expect(moved.count == 1)
        #expect(moved.first?.bodyCount == Self.payload.count)
        #expect(moved.first?.bodySHA256 == server.received.first?.bodySHA256, "the second body differs from the first")

        let refused = Locked(0)
        let delivered = try await Self.post(transport, to: server.url("start"), gives: false, asks: refused)
        #expect(delivered?.statusCode == 307)
        #expect(refused.value == 1)
        #expect(server.received.filter { $0.path == "/moved" }.count == 1)
        try await server.stop()
    }

    @Test("A 401 challenge is answered with a new body from the hook", arguments: TestTransports.names)
    func challenge(transport: String) async throws {
        let server = try await ScriptedServer.start { _, received in
            received.headers["authorization"] == nil
                ? .init(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"r\"")], body: "")
                : .init(status: 200, body: "in")
        }
        let asks = Locked(0)
        let response = try await Self.post(transport, to: server.url("secret"), gives: true, asks: asks) {
            $0.credential = Credential(user: "ada", password: "lovelace")
        }
        #expect(response?.statusCode == 200)
        #expect(asks.value == 1)
        #expect(server.received.count == 2)
        #expect(server.received.last?.bodyCount == Self.payload.count)
        try await server.stop()
    }

    @Test("A replayable body never asks")
    func replayableNeverAsks() async throws {
        let server = try await ScriptedServer.start { _, received in
            received.path == "/start"
                ? .init(status: 307, headers: [("Location", "/moved")], body: "") : .init(status: 200, body: "arrived")
        }
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: TestTransports.make("NIOTransport"))
        let asks = Locked(0)
        manager.hooks.needNewBodyStream = { _ in
            asks.withLock { $0 += 1 }
            return nil
        }
        var request = URLRequest(url: server.url("start"))
        request.httpMethod = "POST"
        let result = try await manager.upload(
            request, body: .data(Self.payload), serializer: HTTPResponseSerializer(acceptableStatusCodes: nil))
        #expect(result.response.statusCode == 200)
        #expect(asks.value == 0)
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
    }
}

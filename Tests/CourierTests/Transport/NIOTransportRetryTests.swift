import Foundation
import Testing

@testable import Courier

/// ``NIOTransport`` sends an idempotent request again, once, when its connection is lost before any byte of a
/// response: the case of a pooled connection the server closed just as it was handed to the request.
///
/// NIOTransport only: URLSessionTransport leaves this to libcurl, which retries only on a connection it reused,
/// never on the fresh one the server here closes.
@Suite struct NIOTransportRetryTests {
    /// A server that closes the connection of the first request it reads without a byte of answer, and answers
    /// every later request with `hello`.
    private func startServerDroppingFirstRequest() async throws -> FaultServer {
        let seen = Locked(0)
        return try await FaultServer.start(
            .reply(close: true) { _ in
                let number = seen.withLock { count -> Int in
                    count += 1
                    return count
                }
                return number == 1 ? Data() : FaultServer.ok()
            })
    }

    @Test("A GET whose connection is lost before any response is sent again, on both paths", arguments: [false, true])
    func idempotentRequestIsRetried(collected: Bool) async throws {
        let server = try await startServerDroppingFirstRequest()
        let transport = NIOTransport()
        let request = TransportRequest(method: "GET", url: server.baseURL)
        let body: Data
        if collected {
            body = try await gather(
                transport.collect(request, cancellation: ExchangeCancellation(), activity: {}).body)
        } else {
            body = try await gather(transport.send(request).body)
        }
        #expect(body == Data("hello".utf8))
        #expect(server.requestCount == 2)
        await transport.shutdown()
        try await server.stop()
    }

    @Test("A POST whose connection is lost is not sent again", arguments: [false, true])
    func postIsNotRetried(collected: Bool) async throws {
        let server = try await startServerDroppingFirstRequest()
        let transport = NIOTransport()
        let request = TransportRequest(method: "POST", url: server.baseURL, body: .data(Data("x".utf8)))
        let error = await #expect(throws: CourierError.self) {
            if collected {
                _ = try await transport.collect(request, cancellation: ExchangeCancellation(), activity: {})
            } else {
                _ = try await transport.send(request)
            }
        }
        #expect(error?.errorCode == -1005)
        #expect(server.requestCount == 1)
        await transport.shutdown()
        try await server.stop()
    }

    private func gather(_ body: DataChunks) async throws -> Data {
        var data = Data()
        for try await chunk in body { data.append(chunk) }
        return data
    }
}

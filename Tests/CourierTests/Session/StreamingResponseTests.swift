import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Bodies handed out as they arrive (`DataStreamTask`), with backpressure, on every transport.
@Suite(.timeLimit(.minutes(2)))
struct StreamingResponseTests {
    static let transports = TestTransports.names

    func manager(_ transport: String, configuration: SessionConfiguration = .ephemeral) -> SessionManager {
        let manager = SessionManager(configuration: configuration, transport: TestTransports.make(transport))
        manager.completionQueue = DispatchQueue(label: "test.completion")
        return manager
    }

    @Test(arguments: transports)
    func lineDelimitedJSONArrivesLineByLine(transport: String) async throws {
        let url = try await HTTPBin.url("stream/20")
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let streamed = try await manager.stream(URLRequest(url: url))
        #expect(streamed.response.statusCode == 200)
        var ids: [Int] = []
        for try await line in streamed.lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            ids.append(try #require(object?["id"] as? Int))
        }
        #expect(ids == Array(0..<20))
        #expect(streamed.task.state == .completed)
        #expect(streamed.task.error == nil)
    }

    @Test(arguments: transports)
    func anHTTPSessionManagerStreamsRelativePaths(transport: String) async throws {
        let manager = HTTPSessionManager(
            baseURL: try await HTTPBin.shared.url(), configuration: .ephemeral,
            transport: TestTransports.make(transport))
        let streamed = try await manager.stream("stream/4", parameters: ["x": "1"])
        var lines: [String] = []
        for try await line in streamed.lines { lines.append(line) }
        #expect(lines.count == 4)
        #expect(streamed.response.url?.query == "x=1")
        withExtendedLifetime(manager) {}
    }

    @Test(arguments: transports)
    func aPausedConsumerStopsTheDownload(transport: String) async throws {
        let body = TestBytes.periodic(count: 8 << 20) { UInt8(truncatingIfNeeded: $0 &* 31) }
        let server = try await RangeServer.start(body, chunkSize: 64 * 1024)
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let streamed = try await manager.stream(URLRequest(url: server.fileURL))
        var iterator = streamed.chunks.makeAsyncIterator()
        var received = try #require(try await iterator.next())
        try await Task.sleep(for: .milliseconds(300))
        // The session reads at most the chunk being handed over and the one waiting for it past the consumer, each at
        // most one of the server's 64 KiB writes (measured: 12 KiB past it on NIOTransport, 32 KiB on URLSession).
        let ahead = streamed.task.countOfBytesReceived - Int64(received.count)
        #expect(ahead <= 2 * 64 * 1024, "\(ahead) bytes read past the consumer")
        #expect(streamed.task.state == .running)
        while let chunk = try await iterator.next() { received.append(chunk) }
        #expect(received == body)
    }

    @Test(arguments: transports)
    func stoppingEarlyCancelsTheTask(transport: String) async throws {
        let server = try await RangeServer.start(Data(count: 4 << 20), chunkSize: 64 * 1024)
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let streamed = try await manager.stream(URLRequest(url: server.fileURL))
        for try await _ in streamed.chunks { break }
        let task = streamed.task
        for _ in 0..<200 where task.state != .completed { try await Task.sleep(for: .milliseconds(10)) }
        #expect(task.state == .completed)
        #expect((task.error as? CourierError)?.errorCode == -999)
    }

    @Test(arguments: transports)
    func anUnacceptableStatusThrowsWithTheBody(transport: String) async throws {
        let url = try await HTTPBin.url("status/418")
        do {
            let manager = manager(transport)
            _ = try await manager.stream(URLRequest(url: url))
            Issue.record("a 418 was accepted")
        } catch let error as CourierError {
            #expect(error.errorCode == -1011)
            #expect(error.response?.statusCode == 418)
            #expect(String(decoding: error.responseData ?? Data(), as: UTF8.self).contains("teapot"))
        }
    }

    @Test(arguments: transports)
    func aConnectionClosedMidBodyEndsTheIterationWithAnError(transport: String) async throws {
        let server = try await FaultServer.start(.closeMidBody)
        defer { Task { try await server.stop() } }
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let streamed = try await manager.stream(URLRequest(url: server.baseURL))
        await #expect(throws: CourierError.self) {
            for try await _ in streamed.chunks {}
        }
        #expect(streamed.task.state == .completed)
    }

    @Test(arguments: transports)
    func aSlowConsumerIsNotATimeout(transport: String) async throws {
        var configuration = SessionConfiguration.ephemeral
        // The idle timeout is short next to the consumer's pause, and long enough for a transport to deliver the
        // next chunk on a machine loaded by the rest of the suite.
        configuration.timeoutIntervalForRequest = 4
        let body = Data(count: 256 * 1024)
        let server = try await RangeServer.start(body, chunkSize: 16 * 1024)
        defer { Task { try await server.stop() } }
        let manager = manager(transport, configuration: configuration)
        defer { withExtendedLifetime(manager) {} }
        let streamed = try await manager.stream(URLRequest(url: server.fileURL))
        var total = 0
        var pauses = 0
        for try await chunk in streamed.chunks {
            total += chunk.count
            if pauses < 1 {
                pauses += 1
                try await Task.sleep(for: .milliseconds(6000))
            }
        }
        #expect(total == body.count)
        #expect(streamed.task.error == nil)
    }

    @Test(arguments: transports)
    func theCompletionHandlerRunsOnceWithoutAnObject(transport: String) async throws {
        let url = try await HTTPBin.url("stream/3")
        let outcome = Outcome()
        let calls = Locked(0)
        let manager = manager(transport)
        defer { withExtendedLifetime(manager) {} }
        let task = manager.dataStreamTask(with: URLRequest(url: url)) { response, object, error in
            calls.withLock { $0 += 1 }
            #expect(response?.statusCode == 200)
            #expect(object == nil)
            outcome.fulfill(error)
        }
        task.resume()
        var lines = 0
        for try await _ in task.lines { lines += 1 }
        #expect(try await outcome.value() == nil)
        #expect(lines == 3)
        #expect(calls.value == 1)
    }
}

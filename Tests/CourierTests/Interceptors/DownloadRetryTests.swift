import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download whose connection drops part-way, retried by ``RetryPolicy``: it continues with `Range` where the
/// response allows it, else starts over, and the file ends whole either way.
@Suite(.timeLimit(.minutes(1)))
struct DownloadRetryTests {
    static func body() -> Data {
        TestBytes.random(count: 256 * 1024, seed: 20)
    }

    func download(from server: RangeServer, transport: String) async throws -> (DataResponse<URL>, Data) {
        var configuration = SessionConfiguration.ephemeral
        configuration.interceptor = RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01)
        let manager = HTTPSessionManager(configuration: configuration, transport: TestTransports.make(transport))
        defer { manager.invalidate(cancelingTasks: true) }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("retry-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let response = try await manager.download(URLRequest(url: server.fileURL), to: destination)
        return (response, try Data(contentsOf: destination))
    }

    @Test("Cut off twice: the retries ask for the rest with Range and If-Range", arguments: TestTransports.names)
    func continuesWithRange(transport: String) async throws {
        let data = Self.body()
        // Paced chunks, so the client has taken some of the body before each cut (a transport drops what it had
        // buffered but not handed over when the connection fails).
        let server = try await RangeServer.start(data, chunkDelay: 0.01, cuts: 2, cutAfter: 64 * 1024)
        let (response, file) = try await download(from: server, transport: transport)
        let requests = server.requests
        try await server.stop()

        #expect(file == data)
        #expect(response.statusCode == 206)
        #expect(requests.count == 3)
        #expect(requests.first?.range == nil)
        let offsets = requests.dropFirst().compactMap { record in
            record.range.flatMap { Int($0.dropFirst("bytes=".count).dropLast()) }
        }
        #expect(offsets.count == 2, "\(requests)")
        // Each retry starts where the file ended (what arrived before the cut: up to the 64 KiB the server sent), so
        // the second starts further on than the first.
        #expect(offsets.allSatisfy { $0 > 0 && $0 <= 2 * 64 * 1024 }, "\(offsets)")
        #expect(offsets == offsets.sorted() && Set(offsets).count == 2, "\(offsets)")
        #expect(requests.dropFirst().allSatisfy { $0.ifRange == "\"v1\"" })
        let transactions = try #require(response.taskMetrics?.transactionMetrics)
        #expect(transactions.map(\.statusCode) == [200, 206, 206])
    }

    @Test(
        "Without a strong validator the retry starts over, and the file is not doubled", arguments: TestTransports.names
    )
    func startsOverWithoutValidator(transport: String) async throws {
        let data = Self.body()
        let server = try await RangeServer.start(data, entityTag: "W/\"weak\"", cuts: 1, cutAfter: 64 * 1024)
        let (response, file) = try await download(from: server, transport: transport)
        let requests = server.requests
        try await server.stop()

        #expect(file == data)
        #expect(response.statusCode == 200)
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.range == nil && $0.ifRange == nil })
    }

    @Test("Without a retrier a cut-off download fails with the lost connection")
    func failsWithoutRetrier() async throws {
        let server = try await RangeServer.start(Self.body(), cuts: 1, cutAfter: 64 * 1024)
        let manager = HTTPSessionManager(configuration: .ephemeral, transport: NIOTransport())
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("retry-\(UUID()).bin")
        let error = await thrownCourierError {
            _ = try await manager.download(URLRequest(url: server.fileURL), to: destination)
        }
        manager.invalidate(cancelingTasks: true)
        try await server.stop()
        #expect(error != nil)
        #expect(server.requests.count == 1)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }
}

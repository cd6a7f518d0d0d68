import Crypto
import Foundation
import Testing

@testable import Courier

/// An upload sent on a kept-alive connection that the server closes, having read the whole request, without
/// answering: what gunicorn's keep-alive timeout does when the next request arrives just as it expires (the
/// integration tests' httpbin stalled this way for 60 seconds under load).
///
/// libcurl then sends the request again on a new connection, but FoundationNetworking cannot rewind a data or file
/// body: the second attempt announced `Content-Length: 100000` and sent no body byte, and the server waited for it
/// without end. Each transport must instead send the whole request again (an idempotent method), or fail it as a lost
/// connection (any other), on every body kind.
@Suite struct StaleConnectionUploadTests {
    static let payload = TestBytes.text(count: 100_000, seed: 32)

    enum BodyKind: String, CaseIterable, Sendable {
        case data, file
    }

    /// The first request is answered on a kept-alive connection; the second, sent on it, is read whole and the
    /// connection closed; every later one is answered with the size of the body it brought.
    static func startServer() async throws -> ScriptedServer {
        try await ScriptedServer.start { index, received in
            index == 1
                ? ScriptedServer.Reply(status: 200, dropsConnection: true)
                : ScriptedServer.Reply(status: 200, body: String(received.bodyCount))
        }
    }

    static func request(_ method: String, _ url: URL, _ kind: BodyKind, file: URL) throws -> TransportRequest {
        let body: HTTPRequestBody = kind == .data ? .data(payload) : try .file(file)
        return TransportRequest(
            method: method, url: url, headers: ["Content-Type": "text/plain"], body: body)
    }

    static func collect(_ body: DataChunks) async throws -> String {
        var data = Data()
        for try await chunk in body { data.append(chunk) }
        return String(decoding: data, as: UTF8.self)
    }

    static func scratchFile() throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stale-upload-\(UUID().uuidString)")
        try payload.write(to: file)
        return file
    }

    /// Runs `body` with a scripted server, a transport and the payload's scratch file, and removes all three on every
    /// way out.
    static func withServer(
        _ transportKind: USTTransportKind,
        _ body: (ScriptedServer, any Transport, URL) async throws -> Void
    ) async throws {
        let server = try await startServer()
        let transport = transportKind.make()
        let file = try scratchFile()
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            try await body(server, transport, file)
        } catch {
            await transport.shutdown()
            try await server.stop()
            throw error
        }
        await transport.shutdown()
        try await server.stop()
    }

    // Before the fix the PUT on URLSessionTransport never completed (the server waited for a body that never came),
    // so a minute is the bound that turns that hang into a failure; the exchange takes milliseconds.
    @Test(.timeLimit(.minutes(1)), arguments: USTTransportKind.allCases, BodyKind.allCases)
    func anIdempotentUploadIsSentAgainWhole(_ transportKind: USTTransportKind, _ bodyKind: BodyKind) async throws {
        try await Self.withServer(transportKind) { server, transport, file in
            let first = try await transport.send(try Self.request("PUT", server.url("first"), bodyKind, file: file))
            #expect(try await Self.collect(first.body) == "100000")
            let second = try await transport.send(try Self.request("PUT", server.url("second"), bodyKind, file: file))
            #expect(second.statusCode == 200)
            #expect(try await Self.collect(second.body) == "100000")
            // Every request the server read whole brought the whole body (a truncated one is never read whole).
            let received = server.received
            #expect(received.map(\.path) == ["/first", "/second", "/second"])
            let digest = SHA256.hash(data: Self.payload).map { String(format: "%02x", $0) }.joined()
            #expect(received.allSatisfy { $0.bodyCount == 100_000 && $0.bodySHA256 == digest })
            if let urlSession = transport as? URLSessionTransport {
                let statistics = urlSession.delegate.statistics.value
                #expect(statistics.bodiesNotResent == 1)
                if bodyKind == .file {
                    // One temporary file for the first request, one for both attempts of the second; all gone.
                    #expect(statistics.uploadFileCount == 3)
                    let temporary = try #require(statistics.lastUploadFile)
                    #expect(!FileManager.default.fileExists(atPath: temporary.path))
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: USTTransportKind.allCases, BodyKind.allCases)
    func aPostIsNotSentAgainButFailsAsAConnectionLost(
        _ transportKind: USTTransportKind, _ bodyKind: BodyKind
    ) async throws {
        try await Self.withServer(transportKind) { server, transport, file in
            let first = try await transport.send(try Self.request("POST", server.url("first"), bodyKind, file: file))
            #expect(try await Self.collect(first.body) == "100000")
            let error = await thrownCourierError {
                _ = try await transport.send(try Self.request("POST", server.url("second"), bodyKind, file: file))
            }
            // The server may have acted on it: the session's retrier decides, as for any lost connection.
            guard case .connectionLost = error else {
                Issue.record("expected connectionLost, got \(String(describing: error))")
                return
            }
            #expect(server.received.map(\.path) == ["/first", "/second"])
            if let urlSession = transport as? URLSessionTransport, bodyKind == .file {
                let temporary = try #require(urlSession.delegate.statistics.value.lastUploadFile)
                #expect(!FileManager.default.fileExists(atPath: temporary.path))
            }
        }
    }
}

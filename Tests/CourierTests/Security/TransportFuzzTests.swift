import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Random and mutated HTTP responses, written byte for byte by a loopback server, through a real session on each
/// transport: no crash, no task that outlives its deadline, exactly one completion for every task, and every
/// failure a ``CourierError``.
///
/// Seeded, so a failure names the case that caused it and reruns the same way: `case N` is the response
/// ``response(case:seed:)`` makes for the server's request `/case/N`.
@Suite("Transport fuzzing", .serialized, .timeLimit(.minutes(4)))
struct TransportFuzzTests {
    static let casesPerTransport = 1500
    static let seed: UInt64 = 0x4855_5A5A

    @Test("Random and mutated responses", arguments: FaultTransportKind.all)
    func randomResponses(_ kind: FaultTransportKind) async throws {
        let isNIO = kind.isNIO
        let server = try await FaultServer.start(
            .reply(close: true) { head in
                let bytes = Self.response(case: Self.caseNumber(in: head), seed: Self.seed)
                // Also when a redirect leads to the case, so the server decides, not the loop below.
                return !isNIO && Self.trapsFoundationNetworking(bytes) ? FaultServer.ok("not sent") : bytes
            })
        defer { Task { try? await server.stop() } }
        var configuration = SessionConfiguration.ephemeral
        configuration.maximumRedirects = 3
        let transport = kind.make()
        let manager = SessionManager(configuration: configuration, transport: transport)
        manager.responseSerializer = HTTPResponseSerializer(acceptableStatusCodes: nil)
        manager.completionQueue = DispatchQueue(label: "TransportFuzzTests.completion")
        var hooks = manager.hooks
        // A mutated Location may name any host: only loopback is ever contacted.
        hooks.willPerformRedirection = { _, _, proposed in proposed.url?.host == "127.0.0.1" ? proposed : nil }
        manager.hooks = hooks
        defer { manager.invalidate(cancelingTasks: true) }

        let deadline: TimeInterval = 3
        var outcomes = (succeeded: 0, failed: 0)
        // Few at a time: the other suites run beside this one, some with timing bounds that a loaded machine misses.
        let batch = 4
        for start in stride(from: 0, to: Self.casesPerTransport, by: batch) {
            let cases = start..<min(start + batch, Self.casesPerTransport)
            var running: [(number: Int, task: DataTask, calls: Locked<[(any Error)?]>)] = []
            for number in cases {
                var request = URLRequest(url: server.baseURL.appendingPathComponent("case/\(number)"))
                request.timeoutInterval = deadline
                let calls = Locked<[(any Error)?]>([])
                let task = manager.dataTask(with: request) { _, _, error in calls.withLock { $0.append(error) } }
                running.append((number, task, calls))
                task.resume()
            }
            let started = ContinuousClock.now
            // The deadline is the request timeout, plus room for a loaded machine; a hang fails here.
            let limit = started + .seconds(deadline + 7)
            while running.contains(where: { $0.calls.withLock(\.isEmpty) }), ContinuousClock.now < limit {
                try await Task.sleep(for: .milliseconds(5))
            }
            for (number, task, calls) in running {
                let errors = calls.withLock { $0 }
                #expect(errors.count == 1, "case \(number): \(errors.count) completions")
                #expect(task.state == .completed, "case \(number)")
                guard let first = errors.first else { continue }
                if let error = first {
                    #expect(error is CourierError, "case \(number): \(error)")
                    outcomes.failed += 1
                } else {
                    outcomes.succeeded += 1
                }
            }
        }
        // A second completion would arrive late: look once more after everything is done.
        try await Task.sleep(for: .milliseconds(200))
        #expect(manager.tasks.isEmpty)
        #expect(outcomes.succeeded > Self.casesPerTransport / 20, "\(outcomes)")
        #expect(outcomes.failed > Self.casesPerTransport / 20, "\(outcomes)")
        await transport.shutdown()
    }

    /// The same responses through the `async` API, whose plain-`http` exchanges NIOTransport runs on its own
    /// HTTP/1.1 connections (`NIOHTTP1Pool`) rather than AsyncHTTPClient's: every call returns or throws a
    /// ``CourierError`` before its deadline, and the session is left with no task.
    @Test("Random and mutated responses through the async API (NIOTransport's own connections)")
    func randomResponsesCollected() async throws {
        let server = try await FaultServer.start(
            .reply(close: true) { head in Self.response(case: Self.caseNumber(in: head), seed: Self.seed) })
        defer { Task { try? await server.stop() } }
        var configuration = SessionConfiguration.ephemeral
        configuration.maximumRedirects = 3
        let transport = NIOTransport()
        let manager = HTTPSessionManager(configuration: configuration, transport: transport)
        var hooks = manager.hooks
        hooks.willPerformRedirection = { _, _, proposed in proposed.url?.host == "127.0.0.1" ? proposed : nil }
        manager.hooks = hooks
        defer { manager.invalidate(cancelingTasks: true) }
        let serializer = HTTPResponseSerializer(acceptableStatusCodes: nil)
        let deadline: TimeInterval = 3
        let cases = Self.casesPerTransport / 2
        var outcomes = (succeeded: 0, failed: 0)
        for start in stride(from: 0, to: cases, by: 8) {
            let results = await withTaskGroup(of: (Int, (any Error)?, Duration).self) { group in
                for number in start..<min(start + 8, cases) {
                    var request = URLRequest(url: server.baseURL.appendingPathComponent("case/\(number)"))
                    request.timeoutInterval = deadline
                    let sent = request
                    group.addTask {
                        let started = ContinuousClock.now
                        do {
                            _ = try await manager.send(sent, serializer: serializer)
                            return (number, nil, ContinuousClock.now - started)
                        } catch {
                            return (number, error, ContinuousClock.now - started)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            for (number, error, took) in results {
                #expect(took < .seconds(deadline + 7), "case \(number) took \(took)")
                if let error {
                    #expect(error is CourierError, "case \(number): \(error)")
                    outcomes.failed += 1
                } else {
                    outcomes.succeeded += 1
                }
            }
        }
        #expect(manager.tasks.isEmpty)
        #expect(outcomes.succeeded > cases / 20, "\(outcomes)")
        #expect(outcomes.failed > cases / 20, "\(outcomes)")
        await transport.shutdown()
    }

    /// Whether `bytes` have a shape FoundationNetworking on Linux itself traps on, inside libcurl's callbacks and
    /// before any delegate of Courier's is called, so no code of Courier's can guard URLSessionTransport from it
    /// there (SECURITY.md lists them):
    /// - a status line and at least one line break (after any complete interim heads), then the connection closes
    ///   before the head is complete, or a head with a bare CR or LF, which libcurl may read as never ending
    ///   (`NativeProtocol.swift`: "Transfer completed, but there's no response");
    /// - a `Content-Length` of 2^63 − 512 or more (`_EasyHandle` turns libcurl's `Double` into `Int64`).
    static func trapsFoundationNetworking(_ bytes: Data) -> Bool {
        #if canImport(Darwin)
            return false
        #else
            var text = Substring(String(decoding: bytes, as: UTF8.self))
            // Interim (1xx) heads are skipped: what matters is whether the final head is complete.
            while text.hasPrefix("HTTP/1.1 1") || text.hasPrefix("HTTP/1.0 1"),
                let end = text.range(of: "\r\n\r\n") ?? text.range(of: "\n\n")
            {
                text = text[end.upperBound...]
            }
            guard text.hasPrefix("HTTP/") else { return false }
            guard let end = text.range(of: "\r\n\r\n") else {
                return text.contains("\n") || text.contains("\r")
            }
            // A bare CR or LF in the head: libcurl reads where it ends differently and may see no end at all.
            let head = Array(text[..<end.lowerBound].utf8)
            for (index, byte) in head.enumerated() {
                let next = index + 1 < head.count ? head[index + 1] : 10
                if byte == 13, next != 10 { return true }
                if byte == 10, index == 0 || head[index - 1] != 13 { return true }
            }
            return text.contains("922337203685477") || text.contains("18446744073709551616")
                || text.contains("99999999999999999999")
        #endif
    }

    /// The `N` of a request head for `/case/N`; 0 when there is none.
    static func caseNumber(in head: String) -> Int {
        guard let range = head.range(of: "/case/") else { return 0 }
        return Int(head[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }

    // MARK: Generator

    /// Well-formed responses the mutations start from: the shapes a client must parse.
    static let seeds: [String] = [
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"a\":[1,2,3]}",
        "HTTP/1.0 200 OK\r\n\r\nold style body",
        "HTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 302 Found\r\nLocation: /case/1\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 301 Moved\r\nLocation: http+unix://%2Ftmp%2Fnothing.sock/\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 307 Temporary\r\nLocation: http://127.0.0.1:70000/\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Digest realm=\"r\", nonce=\"n\", qop=\"auth\"\r\n"
            + "Content-Length: 0\r\n\r\n",
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-4/10\r\nContent-Length: 5\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\n\u{1F}\u{8B}\u{08}\0\0\0\0\0\0\u{03}",
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 3\r\n\r\nbad",
        "HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nSet-Cookie: a=b; Path=/; Max-Age=99999999999999999999\r\nContent-Length: 0\r\n\r\n",
    ]

    /// The response for case `number`: a seed with 0 to 4 mutations, or (one case in eight) random bytes.
    static func response(case number: Int, seed: UInt64) -> Data {
        var random = SeededGenerator(seed: seed &+ UInt64(truncatingIfNeeded: number) &* 0x9E37_79B9_7F4A_7C15)
        if Int.random(in: 0..<8, using: &random) == 0 {
            return Data(
                (0..<Int.random(in: 0..<300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        var bytes = Array(seeds[Int.random(in: 0..<seeds.count, using: &random)].utf8)
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            mutate(&bytes, using: &random)
        }
        return Data(bytes)
    }

    static func mutate(_ bytes: inout [UInt8], using random: inout SeededGenerator) {
        let interesting: [String] = [
            "\r\n", "\r", "\n", ":", " ", "0", "-1", "99999999999999999999", "9223372036854775807",
            "18446744073709551616",
            "\0", "\u{7F}", "\u{FF}", "HTTP/1.1 ", "Content-Length: ", "Transfer-Encoding: chunked\r\n",
            "Location: //127.0.0.1:1/\r\n", "ffffffffffffffff\r\n", "\r\n\r\n", "1xx", "%", "\u{1B}[31m",
        ]
        let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<7, using: &random) {
        case 0 where !bytes.isEmpty:
            bytes[position] = UInt8.random(in: 0...255, using: &random)
        case 1:
            bytes.insert(contentsOf: Array(interesting.randomElement(using: &random)!.utf8), at: position)
        case 2 where !bytes.isEmpty:
            let end = min(bytes.count, position + Int.random(in: 1...16, using: &random))
            bytes.removeSubrange(position..<end)
        case 3 where !bytes.isEmpty:
            let end = min(bytes.count, position + Int.random(in: 1...32, using: &random))
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        case 4:
            bytes = Array(bytes.prefix(position))
        case 5:
            // Another status code, from 0 to 999.
            if bytes.count > 12, bytes.starts(with: Array("HTTP/1.".utf8)) {
                let code = String(format: "%03d", Int.random(in: 0...999, using: &random))
                bytes.replaceSubrange(9..<12, with: Array(code.utf8))
            }
        default:
            bytes.append(
                contentsOf: (0..<Int.random(in: 1...64, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                })
        }
    }
}

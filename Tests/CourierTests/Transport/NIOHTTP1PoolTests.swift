import Foundation
import Testing

@testable import Courier

/// ``NIOTransport``'s own HTTP/1.1 connections (``NIOHTTP1Pool``), which carry every collected plain-`http`
/// exchange (an `async` call's): connection limits and reuse, the request head it writes, cancellation, and
/// shutdown, each against a real server on 127.0.0.1.
@Suite(.timeLimit(.minutes(1))) struct NIOHTTP1PoolTests {
    private func collect(
        _ transport: NIOTransport, _ url: URL, method: String = "GET", headers: HTTPHeaderFields = HTTPHeaderFields(),
        cancellation: ExchangeCancellation = ExchangeCancellation()
    ) async throws -> (TransportResponse, Data) {
        let response = try await transport.collect(
            TransportRequest(method: method, url: url, headers: headers), cancellation: cancellation, activity: {})
        var data = Data()
        for try await chunk in response.body { data.append(chunk) }
        return (response, data)
    }

    /// Courier's own connections (these tests are about them, whatever the suite's default), or, with `own` false,
    /// AsyncHTTPClient's.
    private func transport(maximumConnections: Int = 32, own: Bool = true) -> NIOTransport {
        var configuration = NIOTransport.Configuration()
        configuration.maximumConnectionsPerHost = maximumConnections
        configuration.usesOwnConnections = own
        return NIOTransport(configuration: configuration)
    }

    @Test("Concurrent exchanges share at most maximumConnectionsPerHost connections, the rest wait their turn")
    func connectionLimit() async throws {
        let server = try await FaultServer.start(.countingConnections)
        let transport = transport(maximumConnections: 2)
        let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<40 { group.addTask { try await collect(transport, server.baseURL).1 } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies.count == 40)
        #expect(bodies.allSatisfy { $0 == Data("hello".utf8) })
        #expect(server.requestCount == 40)
        #expect(server.connectionCount <= 2)
        await transport.shutdown()
        try await server.stop()
    }

    @Test("Sequential exchanges reuse one keep-alive connection; a response that closes it is not reused")
    func reuse() async throws {
        let keepAlive = try await FaultServer.start(.countingConnections)
        let closing = try await FaultServer.start(
            .respond(
                Data("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi".utf8), close: true))
        let transport = transport()
        for _ in 0..<5 {
            #expect(try await collect(transport, keepAlive.baseURL).1 == Data("hello".utf8))
            #expect(try await collect(transport, closing.baseURL).1 == Data("hi".utf8))
        }
        #expect(keepAlive.connectionCount == 1)
        #expect(closing.connectionCount == 5)
        await transport.shutdown()
        try await keepAlive.stop()
        try await closing.stop()
    }

    @Test("The request line keeps the URL's encoded path and query and drops its fragment; Host carries the port")
    func requestHead() async throws {
        let server = try await FaultServer.start(.countingConnections)
        let transport = transport()
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/a%20b/c?x=1&y=%2F#fragment"))
        _ = try await collect(transport, url, headers: ["X-Test": "1"])
        _ = try await collect(transport, try #require(URL(string: "http://127.0.0.1:\(server.port)?q=1")))
        _ = try await collect(transport, url, method: "DELETE")
        _ = try await collect(transport, url, method: "POST")
        let heads = server.requestHeads.map { $0.components(separatedBy: "\r\n") }
        try #require(heads.count == 4)
        #expect(heads[0].first == "GET /a%20b/c?x=1&y=%2F HTTP/1.1")
        #expect(heads[0].contains("Host: 127.0.0.1:\(server.port)"))
        #expect(heads[0].contains("X-Test: 1"))
        #expect(!heads[0].contains { $0.lowercased().hasPrefix("content-length") })
        #expect(heads[1].first == "GET /?q=1 HTTP/1.1")
        #expect(!heads[2].contains { $0.lowercased().hasPrefix("content-length") })
        #expect(heads[3].contains("Content-Length: 0"))
        await transport.shutdown()
        try await server.stop()
    }

    @Test(
        "A field that could split the request is refused before anything is sent, on both paths",
        arguments: [true, false],
        [("X-Bad", "a\r\nInjected: 1"), ("X-Bad", "a\nb"), ("X Bad", "1"), ("X-Bad:", "1"), ("", "1")])
    func injection(ownConnections: Bool, field: (name: String, value: String)) async throws {
        let server = try await FaultServer.start(.countingConnections)
        let transport = transport(own: ownConnections)
        var headers = HTTPHeaderFields()
        headers.add(name: field.name, value: field.value)
        let error = await #expect(throws: CourierError.self) {
            _ = try await collect(transport, server.baseURL, headers: headers)
        }
        #expect(error?.errorCode == -1)
        #expect(server.connectionCount == 0)
        await transport.shutdown()
        try await server.stop()
    }

    @Test("A HEAD response's Content-Length is not waited for, and informational heads are skipped")
    func headAndInformational() async throws {
        let head = try await FaultServer.start(
            .respond(Data("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".utf8), close: false))
        let informational = try await FaultServer.start(
            .respond(
                Data("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n".utf8)
                    + FaultServer.ok(), close: false))
        let transport = transport()
        let (response, body) = try await collect(transport, head.baseURL, method: "HEAD")
        #expect(response.statusCode == 200)
        #expect(body.isEmpty)
        let (final, text) = try await collect(transport, informational.baseURL)
        #expect(final.statusCode == 200)
        #expect(text == Data("hello".utf8))
        await transport.shutdown()
        try await head.stop()
        try await informational.stop()
    }

    @Test("Cancelling an exchange, in flight or waiting for a connection, fails it at once and once")
    func cancellation() async throws {
        let server = try await FaultServer.start(.slow(headAfter: nil))
        let transport = transport(maximumConnections: 1)
        let first = ExchangeCancellation()
        let second = ExchangeCancellation()
        async let inFlight = thrownCourierError {
            _ = try await collect(transport, server.baseURL, cancellation: first)
        }
        try await waitUntil(timeout: .seconds(10)) { server.requestCount == 1 }
        async let waiting = thrownCourierError {
            _ = try await collect(transport, server.baseURL, cancellation: second)
        }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        second.cancel()
        #expect(await waiting?.errorCode == -999)
        first.cancel()
        #expect(await inFlight?.errorCode == -999)
        #expect(ContinuousClock.now - started < .seconds(5))
        // The waiting exchange never had a connection, and the cancelled one's connection is closed, not reused.
        #expect(server.requestCount == 1)
        try await waitUntil(timeout: .seconds(10)) { server.openConnectionCount == 0 }
        await transport.shutdown()
        try await server.stop()
    }

    @Test("A cancelled half-read response's connection is closed; the next exchange gets a new one")
    func cancelMidBody() async throws {
        let server = try await FaultServer.start(.slowBody(bytes: 100, every: 0.1))
        let transport = transport()
        for round in 1...2 {
            let cancellation = ExchangeCancellation()
            let arrived = Locked(false)
            async let error = thrownCourierError {
                _ = try await transport.collect(
                    TransportRequest(method: "GET", url: server.baseURL), cancellation: cancellation,
                    activity: { arrived.withLock { $0 = true } })
            }
            try await waitUntil(timeout: .seconds(10)) { arrived.withLock { $0 } }
            cancellation.cancel()
            #expect(await error?.errorCode == -999)
            #expect(server.connectionCount == round)
        }
        await transport.shutdown()
        try await server.stop()
    }

    @Test("Shutting the transport down fails exchanges in flight and waiting, and later ones")
    func shutdown() async throws {
        let server = try await FaultServer.start(.slow(headAfter: nil))
        let transport = transport(maximumConnections: 1)
        async let inFlight = thrownCourierError { _ = try await collect(transport, server.baseURL) }
        try await waitUntil(timeout: .seconds(10)) { server.requestCount == 1 }
        async let waiting = thrownCourierError { _ = try await collect(transport, server.baseURL) }
        try await Task.sleep(for: .milliseconds(100))
        await transport.shutdown()
        #expect(await inFlight?.errorCode == -1005)
        #expect(await waiting?.errorCode == -1005)
        let later = await thrownCourierError { _ = try await collect(transport, server.baseURL) }
        #expect(later != nil)
        try await server.stop()
    }

    @Test("With usesOwnConnections off, collected exchanges go through AsyncHTTPClient and still work")
    func switchedOff() async throws {
        let server = try await FaultServer.start(.countingConnections)
        var configuration = NIOTransport.Configuration()
        configuration.usesOwnConnections = false
        let transport = NIOTransport(configuration: configuration)
        for _ in 0..<3 { #expect(try await collect(transport, server.baseURL).1 == Data("hello".utf8)) }
        #expect(server.requestHeads.allSatisfy { $0.lowercased().contains("host: 127.0.0.1") })
        await transport.shutdown()
        try await server.stop()
    }
}

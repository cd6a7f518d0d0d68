import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOPosix
import Testing

// The code sample of Sources/Courier/Courier.docc/Transports.md, between `// sample: NAME` and `// end sample`,
// appears in the article verbatim (checked by `articleShowsTheSampleVerbatim`); the test below runs it.

// sample: shared-event-loops
/// A server app's outgoing calls on the app's own event loops, then through the app's own `HTTPClient`.
func callFromTheApp(eventLoopGroup: any EventLoopGroup, appClient: HTTPClient, service: URL) async throws -> [Int] {
    // The app's group (Vapor's and Hummingbird's `app.eventLoopGroup`): no threads of Courier's own.
    let transport = NIOTransport(eventLoopGroup: eventLoopGroup)
    let api = HTTPSessionManager(baseURL: service, transport: transport)
    let first = try await api.head("health").statusCode

    // Or the app's client (Vapor's `app.http.client.shared`), made with `redirectConfiguration: .disallow`.
    let throughClient = NIOTransport(httpClient: appClient)
    let other = HTTPSessionManager(baseURL: service, transport: throughClient)
    let second = try await other.head("health").statusCode

    // The transports first; the app shuts its group and client down afterwards, as it always does.
    await transport.shutdown()
    await throughClient.shutdown()
    return [first, second]
}
// end sample

@Suite(.timeLimit(.minutes(1))) struct TransportsArticleTests {
    @Test func sampleRuns() async throws {
        let server = try await FaultServer.start(.respond(Data("HTTP/1.1 204 No Content\r\n\r\n".utf8), close: false))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPClient(eventLoopGroup: group, configuration: .init(redirectConfiguration: .disallow))
        let statuses = try await callFromTheApp(eventLoopGroup: group, appClient: client, service: server.baseURL)
        #expect(statuses == [204, 204])
        #expect(server.requestCount == 2)
        try await client.shutdown()
        try await group.shutdownGracefully()
        try await server.stop()
    }

    @Test func articleShowsTheSampleVerbatim() throws {
        try DocumentationSamples.check(test: #filePath, article: "Transports.md", expected: 1)
    }
}

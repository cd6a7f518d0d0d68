import Courier
import Foundation
import NIOCore

/// The upstream service, reached through one Courier session that runs on the app's event loops.
struct Upstream: Sendable {
    let client: HTTPSessionManager

    init(baseURL: String, eventLoopGroup: any EventLoopGroup) throws {
        guard let url = URL(string: baseURL) else { throw CourierError.invalidURL(baseURL) }
        var configuration = SessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        // POST is not retried by default (it is not idempotent); this upstream's POST is, so it may be.
        configuration.interceptor = RetryPolicy(
            retryLimit: 2, exponentialBackoffScale: 0.2, retryableHTTPMethods: ["GET", "POST"])
        // The transport runs on the app's group and does not shut it down.
        client = HTTPSessionManager(
            baseURL: url, configuration: configuration, transport: NIOTransport(eventLoopGroup: eventLoopGroup))
        client.requestSerializer = JSONRequestSerializer()
    }

    func shutdown() async {
        client.invalidate(cancelingTasks: true)
        await client.transport.shutdown()
    }
}

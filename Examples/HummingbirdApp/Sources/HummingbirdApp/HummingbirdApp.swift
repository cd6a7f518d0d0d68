import Courier
import Foundation
import Hummingbird
import NIOPosix

/// A Hummingbird app that calls an upstream service (httpbin, at `UPSTREAM_URL`) with Courier, on the app's own event
/// loops: `swift run HummingbirdApp` with `UPSTREAM_URL=http://127.0.0.1:8080` and `PORT=8082`.
@main
enum HummingbirdApp {
    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
        // One group for the server and for Courier's connections.
        let group = MultiThreadedEventLoopGroup.singleton
        let upstream = try Upstream(
            baseURL: environment["UPSTREAM_URL"] ?? "http://127.0.0.1:8080", eventLoopGroup: group)
        let router = Router()
        routes(router, upstream: upstream)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: Int(environment["PORT"] ?? "") ?? 8082)),
            eventLoopGroupProvider: .shared(group))
        do {
            try await app.runService()
        } catch {
            print("HummingbirdApp: \(error)")
        }
        await upstream.shutdown()
    }
}

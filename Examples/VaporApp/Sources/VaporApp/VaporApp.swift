import Courier
import Vapor

/// A Vapor app that calls an upstream service (httpbin, at `UPSTREAM_URL`) with Courier, on the app's own event
/// loops: `swift run VaporApp serve --port 8081` with `UPSTREAM_URL=http://127.0.0.1:8080`.
@main
enum VaporApp {
    static func main() async throws {
        let environment = try Environment.detect()
        let app = try await Application.make(environment)
        let upstream = try Upstream(
            baseURL: Environment.get("UPSTREAM_URL") ?? "http://127.0.0.1:8080", eventLoopGroup: app.eventLoopGroup)
        do {
            try routes(app, upstream: upstream)
            try await app.execute()
        } catch {
            app.logger.report(error: error)
        }
        // Courier's connections first, then the event loops they run on.
        await upstream.shutdown()
        try await app.asyncShutdown()
    }
}

import Foundation

@testable import Courier

/// Runs `body` with a manager on a new transport of `kind`, then invalidates the manager, shuts the transport down
/// and stops `server`, also when `body` throws.
func withSession(
    _ server: FaultServer, _ kind: FaultTransportKind, baseURL: URL? = nil,
    configuration: SessionConfiguration = .ephemeral, _ body: (HTTPSessionManager) async throws -> Void
) async throws {
    let transport = kind.make()
    let manager = HTTPSessionManager(baseURL: baseURL, configuration: configuration, transport: transport)
    var failure: (any Error)?
    do {
        try await body(manager)
    } catch {
        failure = error
    }
    manager.invalidate(cancelingTasks: true)
    await transport.shutdown()
    try? await server.stop()
    if let failure { throw failure }
}

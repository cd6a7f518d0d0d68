import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `401` answered from ``SessionConfiguration/urlCredentialStorage`` when the session's own credential does not
/// answer it, as URLSession's default handling does, on both transports; only for the protection space the
/// credential was stored for.
@Suite struct CredentialStorageTests {
    /// A server asking for Basic in realm `stored-realm`, satisfied by `ada:pw`.
    private func server() async throws -> ScriptedServer {
        try await ScriptedServer.start { _, received in
            if received.headers["authorization"] == "Basic YWRhOnB3" { return .init(status: 200, body: "in") }
            return .init(status: 401, headers: [("WWW-Authenticate", #"Basic realm="stored-realm""#)], body: "no")
        }
    }

    private func space(_ server: ScriptedServer, realm: String) throws -> URLProtectionSpace {
        URLProtectionSpace(
            host: "127.0.0.1", port: try #require(server.baseURL.port), protocol: "http", realm: realm,
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    }

    @Test("The stored credential of the challenge's protection space answers the 401", arguments: TestTransports.names)
    func storedCredentialAnswers(transport name: String) async throws {
        let server = try await server()
        let storage = URLCredentialStorage()
        storage.set(
            URLCredential(user: "ada", password: "pw", persistence: .forSession),
            for: try space(server, realm: "stored-realm"))
        var configuration = SessionConfiguration.ephemeral
        configuration.urlCredentialStorage = storage
        let manager = HTTPSessionManager(
            baseURL: server.baseURL, configuration: configuration, transport: TestTransports.make(name))
        let response = try await manager.send("GET", "private", serializer: HTTPResponseSerializer())
        #expect(response.value == Data("in".utf8))
        #expect(server.received.count == 2)
        manager.invalidate(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    @Test("A credential stored for another realm, or none stored, leaves the 401 as it is")
    func otherRealmDoesNotAnswer() async throws {
        let server = try await server()
        let storage = URLCredentialStorage()
        storage.set(
            URLCredential(user: "ada", password: "pw", persistence: .forSession),
            for: try space(server, realm: "other-realm"))
        for configured in [storage, nil] {
            var configuration = SessionConfiguration.ephemeral
            configuration.urlCredentialStorage = configured
            let manager = HTTPSessionManager(baseURL: server.baseURL, configuration: configuration)
            let error = await thrownCourierError {
                _ = try await manager.send("GET", "private", serializer: HTTPResponseSerializer())
            }
            #expect(error?.response?.statusCode == 401)
            manager.invalidate(cancelingTasks: true)
        }
        // An ephemeral configuration's storage is its own.
        #expect(SessionConfiguration.ephemeral.urlCredentialStorage !== URLCredentialStorage.shared)
        #expect(SessionConfiguration.default.urlCredentialStorage === URLCredentialStorage.shared)
        try await server.stop()
    }
}

import Foundation
import Testing

@testable import CourierCLI

/// `-A bearer -a TOKEN`, as HTTPie spells it: the token goes out as `Authorization: Bearer TOKEN` with the first
/// request, never to another origin after a redirect, and a token that cannot be a field value is refused.
struct CLIBearerAuthTests {
    @Test func theTokenGoesOutAsABearerAuthorization() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let result = try await CourierProcess.run([
            "-A", "bearer", "-a", "abc.DEF-123", server.url("me").absoluteString,
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(server.received.first?.headers["authorization"] == "Bearer abc.DEF-123")
        try await server.stop()
    }

    @Test func aRedirectToAnotherOriginDoesNotCarryTheToken() async throws {
        let other = try await ScriptedServer.start([.init(status: 200, body: "elsewhere")])
        let first = try await ScriptedServer.start([
            .init(status: 302, headers: [("Location", other.url("landing").absoluteString)], body: "")
        ])
        let result = try await CourierProcess.run([
            "--follow", "--auth-type", "bearer", "--auth", "secret-token", first.url("start").absoluteString,
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("elsewhere"))
        #expect(first.received.first?.headers["authorization"] == "Bearer secret-token")
        #expect(other.received.count == 1)
        #expect(other.received.first?.headers["authorization"] == nil)
        try await first.stop()
        try await other.stop()
    }

    @Test(arguments: ["", "two words", "line\nbreak", "tab\there"])
    func aTokenThatCannotBeAFieldValueIsRefused(token: String) async throws {
        #expect(throws: CommandFailure.self) { try AuthOptions(token, scheme: .bearer) }
        let result = try await CourierProcess.run(["-A", "bearer", "-a", token, "--offline", "http://127.0.0.1:9/"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("bearer token"), "stderr: \(result.stderr)")
    }

    @Test func anUnknownAuthTypeNamesTheThree() async throws {
        let result = try await CourierProcess.run(["-A", "ntlm", "-a", "u:p", "--offline", "http://127.0.0.1:9/"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("basic, digest or bearer"), "stderr: \(result.stderr)")
    }
}

import Foundation
import Testing

@testable import Courier
@testable import CourierCLI

/// `~/.netrc` (or `$NETRC`), as HTTPie reads it by default: the machine's login and password go as Basic when the
/// command gives no credentials; `--ignore-netrc` and given credentials win; a file others can read, or one that
/// cannot be read, is refused with a message.
struct CLINetrcTests {
    private static func netrc(_ text: String, mode: Int) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-netrc-\(UUID())")
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        return url
    }

    private static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    @Test func theMachinesCredentialsGoAsBasicAndTheDefaultCoversOtherHosts() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let file = try Self.netrc(
            """
            machine 127.0.0.1 login alice password "s3cret pass"
            default login anyone password whatever
            """, mode: 0o600)
        defer { try? FileManager.default.removeItem(at: file) }
        let environment = ["NETRC": file.path]
        let byMachine = try await CourierProcess.run([server.url("a").absoluteString], environment: environment)
        #expect(byMachine.status == 0, "stderr: \(byMachine.stderr)")
        #expect(server.received.last?.headers["authorization"] == Self.basic("alice", "s3cret pass"))
        let byDefault = try await CourierProcess.run(
            ["http://localhost:\(server.baseURL.port ?? 0)/b"], environment: environment)
        #expect(byDefault.status == 0, "stderr: \(byDefault.stderr)")
        #expect(server.received.last?.headers["authorization"] == Self.basic("anyone", "whatever"))
        let ignored = try await CourierProcess.run(
            ["--ignore-netrc", server.url("c").absoluteString], environment: environment)
        #expect(ignored.status == 0)
        #expect(server.received.last?.headers["authorization"] == nil)
        let given = try await CourierProcess.run(
            ["-a", "bob:pw", server.url("d").absoluteString], environment: environment)
        #expect(given.status == 0)
        #expect(server.received.last?.headers["authorization"] == Self.basic("bob", "pw"))
        try await server.stop()
    }

    @Test func aFileOthersCanReadIsRefusedAndNothingIsSent() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let file = try Self.netrc("machine 127.0.0.1 login alice password secret\n", mode: 0o644)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await CourierProcess.run([server.url("a").absoluteString], environment: ["NETRC": file.path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("other users"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("chmod 600"))
        #expect(server.received.isEmpty)
        try await server.stop()
    }

    @Test func aFileThatCannotBeReadIsAnError() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-netrc-dir-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await CourierProcess.run(
            ["--offline", "http://127.0.0.1:9/"], environment: ["NETRC": directory.path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot read the netrc file"), "stderr: \(result.stderr)")
    }

    @Test func noFileIsNoCredentials() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("courier-no-netrc-\(UUID())")
        let result = try await CourierProcess.run(
            ["--offline", "http://127.0.0.1:9/"], environment: ["NETRC": missing.path])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.stdout.contains("Authorization"))
    }

    @Test func parsing() {
        let netrc = Netrc(
            parsing: """
                macdef init
                machine evil.example login mallory password nope

                machine API.Example.com
                  login "a \\"quoted\\" user"
                  password p@ss
                """)
        #expect(netrc.credential(for: "evil.example") == nil)  // inside the macro, which a blank line ends
        #expect(netrc.credential(for: "api.example.com") == Credential(user: "a \"quoted\" user", password: "p@ss"))
        #expect(netrc.credential(for: "other.example") == nil)
    }
}

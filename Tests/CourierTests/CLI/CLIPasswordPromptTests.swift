import Foundation
import Testing

@testable import Courier
@testable import CourierCLI

/// `-a USER` without a password, as HTTPie takes it: the password is asked for on the terminal, and without one the
/// command fails with a message saying how to give it instead of hanging or sending an empty password.
struct CLIPasswordPromptTests {
    @Test func aUserWithoutAPasswordIsAskedForOne() throws {
        var asked: [String] = []
        let options = try AuthOptions("alice", scheme: .basic) { user in
            asked.append(user)
            return "typed secret"
        }
        #expect(asked == ["alice"])
        #expect(options.credential == Credential(user: "alice", password: "typed secret"))
        // With a colon, nothing is asked, even for an empty password.
        let given = try AuthOptions("bob:", scheme: .digest) { _ in
            Issue.record("asked for a password that was given")
            return ""
        }
        #expect(given.credential == Credential(user: "bob", password: ""))
    }

    @Test func theCommandWithoutAControllingTerminalFailsAndSendsNothing() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        // In a new session the process has no controlling terminal, so /dev/tty cannot be opened, even when the
        // tests run from one; --wait hands back courier's exit status.
        let result = try await CourierProcess.run(
            ["-a", "alice", server.url("private").absoluteString], launcher: ["/usr/bin/setsid", "--wait"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--auth USER:PASSWORD"), "stderr: \(result.stderr)")
        #expect(server.received.isEmpty)
        try await server.stop()
    }

    @Test func theHelpSaysAUserAloneIsAskedForAPassword() async throws {
        let result = try await CourierProcess.run(["request", "--help"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // The help is wrapped to the width: compare the words, not the lines.
        let words = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("-a USER alone asks for the password on the terminal"), "help: \(result.stdout)")
    }

    @Test(arguments: ["/nonexistent/tty", "/dev/null"])
    func withoutATerminalTheCommandSaysHowToGiveThePassword(terminal: String) {
        let error = #expect(throws: CommandFailure.self) { try PasswordPrompt.ask("password: ", terminal: terminal) }
        #expect(error?.message.contains("--auth USER:PASSWORD") == true, "\(String(describing: error))")
    }
}

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

    @Test(arguments: ["/nonexistent/tty", "/dev/null"])
    func withoutATerminalTheCommandSaysHowToGiveThePassword(terminal: String) {
        let error = #expect(throws: CommandFailure.self) { try PasswordPrompt.ask("password: ", terminal: terminal) }
        #expect(error?.message.contains("--auth USER:PASSWORD") == true, "\(String(describing: error))")
    }
}

import ArgumentParser
import Courier
import Foundation

/// `courier`: the root command. `courier demo` runs the demo; anything else is a request (``RequestCommand``).
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "An HTTP client for the command line, built on the Courier library.",
        usage: "courier [METHOD] URL [ITEM ...] [OPTIONS]    or    courier demo",
        discussion: """
            Examples:
              courier :8080/get q==search X-Token:abc    GET, a query parameter, a header
              courier example.org/post name=bang n:=1    POST {"n":1,"name":"bang"} as JSON
              courier -d example.org/file.iso            download with a progress bar
              courier demo                               a tour of the library on 127.0.0.1
            Every request option: courier request --help
            """,
        version: DefaultHeaders.courierVersion,
        subcommands: [RequestCommand.self, DemoCommand.self],
        defaultSubcommand: RequestCommand.self)
}

/// The command line's entry point, shared by the `courier` executable and the tests.
public enum CourierCommandLine {
    /// Runs `courier` with `arguments` (without the program name) and returns the exit status; messages go to
    /// standard error as `courier: error: …`.
    public static func run(_ arguments: [String]) async -> Int32 {
        do {
            var command = try CourierCommand.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return ExitStatus.success.rawValue
        } catch let failure as CommandFailure {
            if !failure.message.isEmpty {
                try? FileHandle.standardError.write(contentsOf: Data("courier: error: \(failure.message)\n".utf8))
            }
            return failure.status.rawValue
        } catch {
            let message = CourierCommand.fullMessage(for: error)
            if CourierCommand.exitCode(for: error) == .success {
                try? FileHandle.standardOutput.write(contentsOf: Data((message + "\n").utf8))
                return ExitStatus.success.rawValue
            }
            try? FileHandle.standardError.write(contentsOf: Data("courier: error: \(message)\n".utf8))
            return ExitStatus.failure.rawValue
        }
    }
}

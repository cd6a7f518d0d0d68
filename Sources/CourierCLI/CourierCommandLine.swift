import ArgumentParser
import Foundation

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

import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The command line's entry point, shared by the `courier` executable and the tests.
public enum CourierCommandLine {
    /// Runs `courier` with `arguments` (without the program name) and returns the exit status; messages go to
    /// standard error as `courier: error: …`, with control characters escaped (they may quote the server).
    public static func run(_ arguments: [String]) async -> Int32 {
        // A write to a closed pipe must fail with EPIPE, which the writers report, rather than kill the process
        // with SIGPIPE before it can clean up and exit with its status.
        signal(SIGPIPE, SIG_IGN)
        let status = await execute(arguments)
        // Everything queued is written before the process exits.
        try? await DescriptorWriter.standardOutput.drain()
        try? await DescriptorWriter.standardError.drain()
        return status
    }

    private static func execute(_ arguments: [String]) async -> Int32 {
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
                reportError(failure.message)
            }
            return failure.status.rawValue
        } catch {
            let message = CourierCommand.fullMessage(for: error)
            if CourierCommand.exitCode(for: error) == .success {
                DescriptorWriter.standardOutput.enqueue(Data((message + "\n").utf8))
                return ExitStatus.success.rawValue
            }
            reportError(message)
            return ExitStatus.failure.rawValue
        }
    }

    private static func reportError(_ message: String) {
        DescriptorWriter.standardError.enqueue(Data("courier: error: \(TerminalText.escape(message))\n".utf8))
    }
}

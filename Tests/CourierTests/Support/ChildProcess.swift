import Foundation

/// A child process run to its end off the cooperative pool (see ``OffPool``).
enum ChildProcess {
    /// How a child ended and what it wrote to its standard output.
    struct Outcome: Sendable {
        var status: Int32
        var stdout: Data
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs `executable` with `arguments`, its standard error discarded, and waits for its end.
    static func run(_ executable: String, _ arguments: [String]) async throws -> Outcome {
        try await OffPool.run {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Outcome(status: process.terminationStatus, stdout: data)
        }
    }

    /// Runs `command` with `/bin/sh -c`.
    static func shell(_ command: String) async throws -> Outcome {
        try await run("/bin/sh", ["-c", command])
    }
}

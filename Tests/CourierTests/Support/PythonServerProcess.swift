import Foundation

/// A test server written in Python, run as `python3 -c SCRIPT <test pid> ARGUMENTS…`: the script prints the port it
/// listens on (on 127.0.0.1) as its first line, and should exit once the process whose id it was given is gone (so
/// a crashed test leaves no server behind).
enum PythonServerProcess {
    /// The script printed no port.
    struct DidNotStart: Error {}

    /// Starts `script` and returns the running process and its port, once it listens. The wait for Python to start
    /// is spent off the cooperative pool (see ``OffPool``).
    ///
    /// - Throws: ``DidNotStart`` when the first line is not a port (the process is then stopped).
    static func start(_ script: String, arguments: [String] = []) async throws -> (process: Process, port: Int) {
        try await OffPool.run { try launch(script, arguments: arguments) }
    }

    private static func launch(_ script: String, arguments: [String]) throws -> (process: Process, port: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, "\(getpid())"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is the port; reading it waits until the server listens.
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw DidNotStart()
        }
        return (process, port)
    }
}

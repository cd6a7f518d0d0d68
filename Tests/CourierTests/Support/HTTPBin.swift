import Foundation

@testable import Courier

/// httpbin (from PyPI) under gunicorn on 127.0.0.1 with a free port, started once for the whole test run.
///
/// A small Python supervisor runs gunicorn and stops it when the test process goes away, even if the tests crash,
/// so no server outlives the run. `bash .ci/run` installs httpbin and gunicorn with pip.
actor HTTPBin {
    static let shared = HTTPBin()

    private var started: Task<URL, any Error>?

    /// The server's base URL, e.g. `http://127.0.0.1:41234/`.
    func url() async throws -> URL {
        if let started { return try await started.value }
        // Launching waits for the server synchronously: off the cooperative pool.
        let task = Task { try await OffPool.run { try Self.launch() } }
        started = task
        return try await task.value
    }

    /// `path` resolved against the server.
    static func url(_ path: String) async throws -> URL {
        let base = try await shared.url()
        guard let url = URL(string: path, relativeTo: base)?.absoluteURL else { throw CourierError.invalidURL(path) }
        return url
    }

    /// gunicorn closes a kept-alive connection after 2 s idle by default, while clients keep theirs for 60 s: a
    /// request sent on one as gunicorn closes it is lost (-1005 for a POST, which no transport sends again). Seen in
    /// full runs under load, where a test's requests are seconds apart. 75 s, as nginx's default, leaves closing
    /// idle connections to the client; the stale-connection race has tests of its own (StaleConnectionUploadTests).
    private static let supervisor = """
        import os, subprocess, sys, time
        parent = os.getppid()
        server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-b", "127.0.0.1:0", "-w", "2", "--threads", "32",
                                   "--graceful-timeout", "1", "--keep-alive", "75", "--log-level", "info", "httpbin:app"],
                                  stdout=subprocess.DEVNULL, stderr=sys.stderr)
        try:
            while server.poll() is None:
                if os.getppid() != parent:
                    break
                time.sleep(0.3)
        finally:
            server.terminate()
            try:
                server.wait(timeout=5)
            except Exception:
                server.kill()
        """

    private static func launch() throws -> URL {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", supervisor]
        let log = Pipe()
        process.standardError = log
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        var text = ""
        let handle = log.fileHandleForReading
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let range = text.range(of: #"Listening at: (http://127\.0\.0\.1:\d+)"#, options: .regularExpression) {
                let address = text[range].replacingOccurrences(of: "Listening at: ", with: "")
                // Keep draining the log so gunicorn never blocks on a full pipe.
                Thread.detachNewThread {
                    while !handle.availableData.isEmpty {}
                }
                guard let url = URL(string: address + "/") else { break }
                try waitUntilAnswering(url)
                return url
            }
        }
        process.terminate()
        throw HTTPBinError.didNotStart(text)
    }

    private static func waitUntilAnswering(_ url: URL) throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if (try? Data(contentsOf: url.appendingPathComponent("get"))) != nil { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw HTTPBinError.didNotStart("no answer from \(url)")
    }
}

enum HTTPBinError: Error {
    case didNotStart(String)
}

/// The transports every integration test runs on.
enum TestTransports {
    static let names = ["NIOTransport", "URLSessionTransport"]

    static func make(_ name: String) -> any Transport {
        name == "URLSessionTransport" ? URLSessionTransport() : NIOTransport()
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real proxy on 127.0.0.1, started and stopped by the test: Debian's tinyproxy (an HTTP proxy with Basic
/// credentials) or pproxy from PyPI (SOCKS5, and an HTTP proxy that answers a wrong password with 407).
/// `bash Scripts/test.sh` installs both when they are missing.
///
/// A shell wrapper runs the proxy and stops it when the test process goes away, so none outlives a crashed run. The
/// proxy's own log says which requests it carried (``log``).
final class ProxyServer: Sendable {
    /// The port of the proxy (pproxy: the HTTP listener).
    let port: Int
    /// pproxy's SOCKS5 listener; 0 for tinyproxy.
    let socksPort: Int
    private let process: Process
    private let directory: URL

    private init(port: Int, socksPort: Int, process: Process, directory: URL) {
        (self.port, self.socksPort, self.process, self.directory) = (port, socksPort, process, directory)
    }

    /// tinyproxy, wanting `user` and `password` (Basic). It answers a request without credentials with 407, and,
    /// being version 1.11, wrong ones with 401.
    static func tinyproxy(user: String, password: String) async throws -> ProxyServer {
        try await start { directory, port, _ in
            let config = """
                Port \(port)
                Listen 127.0.0.1
                Timeout 60
                MaxClients 100
                LogFile "\(directory.path)/proxy.log"
                LogLevel Info
                BasicAuth \(user) \(password)
                """
            try Data(config.utf8).write(to: directory.appendingPathComponent("tinyproxy.conf"))
            return "exec /usr/bin/tinyproxy -d -c \"$1/tinyproxy.conf\""
        }
    }

    /// pproxy: SOCKS5 without credentials on ``socksPort``, and an HTTP proxy wanting `user` and `password` on
    /// ``port`` (it checks them for plain `http` requests only, not for `CONNECT`).
    static func pproxy(user: String, password: String) async throws -> ProxyServer {
        try await start { _, port, socksPort in
            "exec python3 -u -m pproxy -l socks5://127.0.0.1:\(socksPort) "
                + "-l 'http://127.0.0.1:\(port)#\(user):\(password)' -v > \"$1/proxy.log\" 2>&1"
        }
    }

    /// What the proxy logged, line by line.
    var log: [String] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("proxy.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// The log lines that name `target` (`127.0.0.1:8080`): a request the proxy carried there.
    func lines(mentioning target: String) -> [String] {
        log.filter { $0.contains(target) && !$0.contains("Connect call failed") }
    }

    private static func start(
        _ command: @escaping @Sendable (URL, Int, Int) throws -> String
    ) async throws -> ProxyServer {
        try await OffPool.run { try launch(command) }
    }

    private static func launch(_ command: (URL, Int, Int) throws -> String) throws -> ProxyServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-proxy-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try NginxTLS.freePort()
        let socksPort = try NginxTLS.freePort()
        let run = try command(directory, port, socksPort)
        // SIGKILL: the test process's blocked signals are inherited, and the proxy would ignore SIGTERM.
        let script = """
            (\(run)) & child=$!
            echo $child > "$1/child.pid"
            while kill -0 "$2" 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 0.2; done
            kill -9 $child 2>/dev/null; wait $child
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "proxy-wrapper", directory.path, "\(getpid())"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let server = ProxyServer(port: port, socksPort: socksPort, process: process, directory: directory)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if NginxTLS.canConnect(port: port) { return server }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        let log = server.log.joined(separator: "\n")
        server.stop()
        throw NginxError.didNotStart("the proxy did not start: \(log)")
    }

    /// Stops the proxy (at once) and removes its files (once it has exited, off the cooperative pool).
    func stop() {
        if let text = try? String(contentsOf: directory.appendingPathComponent("child.pid"), encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(pid, SIGKILL)
        } else {
            kill(process.processIdentifier, SIGKILL)
        }
        OffPool.detach { [process, directory] in
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
        }
    }
}

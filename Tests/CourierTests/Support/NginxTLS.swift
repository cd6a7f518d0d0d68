import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's nginx serving HTTPS (HTTP/2 and HTTP/1.1) on 127.0.0.1 with a free port and a given certificate chain,
/// started and stopped by the test. `bash .ci/run` installs nginx when it is missing.
///
/// A shell wrapper runs nginx in the foreground and stops it when the test process goes away, so no server outlives
/// a crashed run.
final class NginxTLS: Sendable {
    /// The port nginx listens on.
    let port: Int
    /// `https://127.0.0.1:<port>/`.
    let baseURL: URL
    private let process: Process
    private let directory: URL

    /// Starts nginx with `chainPEM` (leaf first) and `keyPEM`; with `clientCAsPEM`, nginx requires a client
    /// certificate issued by one of them (answering 400 without one).
    /// `extraLocations` is nginx configuration added to the server block (e.g. a `location` that redirects).
    init(chainPEM: String, keyPEM: String, clientCAsPEM: String? = nil, extraLocations: String = "") throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-nginx-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(chainPEM.utf8).write(to: directory.appendingPathComponent("chain.pem"))
        try Data(keyPEM.utf8).write(to: directory.appendingPathComponent("key.pem"))
        let port = try Self.freePort()
        let path = directory.path
        var clientVerification = ""
        if let clientCAsPEM {
            try Data(clientCAsPEM.utf8).write(to: directory.appendingPathComponent("client-cas.pem"))
            clientVerification = """
                ssl_client_certificate \(path)/client-cas.pem;
                        ssl_verify_client on;
                        ssl_verify_depth 3;
                """
        }
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 512; }
            http {
                log_format courier '$connection $server_protocol $status $request_uri';
                access_log \(path)/access.log courier;
                client_body_temp_path \(path)/body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                keepalive_requests 100000;
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(path)/chain.pem;
                    ssl_certificate_key \(path)/key.pem;
                    # Debian's nginx 1.22 leaves TLS 1.3 out of its default protocols.
                    ssl_protocols TLSv1.2 TLSv1.3;
                    \(clientVerification)
                    \(extraLocations)
                    location / { default_type text/plain; return 200 "secure $server_protocol\\n"; }
                }
            }
            """
        try Data(config.utf8).write(to: directory.appendingPathComponent("nginx.conf"))
        // SIGKILL, because the test process's blocked signals are inherited and nginx would ignore SIGTERM.
        let script = """
            /usr/sbin/nginx -p "$1" -c "$1/nginx.conf" & child=$!
            echo $child > "$1/child.pid"
            while kill -0 "$2" 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 0.2; done
            kill -9 $child 2>/dev/null; wait $child
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, "nginx-wrapper", path, "\(getpid())"]
        // Neither output is the test process's: `swift test` waits for the end of its pipes before it reaps the
        // test process, and this wrapper outlives a test process that ends before it is stopped (it sees a
        // zombie, unreaped, as alive), so an inherited pipe kept both waiting for good.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.port = port
        guard let baseURL = URL(string: "https://127.0.0.1:\(port)/") else { throw NginxError.noPort }
        self.baseURL = baseURL
        self.process = process
        self.directory = directory
        try waitUntilListening()
    }

    /// Starts nginx as ``init(chainPEM:keyPEM:clientCAsPEM:)`` does, off the cooperative pool (see ``OffPool``):
    /// starting waits for the port synchronously.
    static func start(
        chainPEM: String, keyPEM: String, clientCAsPEM: String? = nil, extraLocations: String = ""
    ) async throws -> NginxTLS {
        try await OffPool.run {
            try NginxTLS(
                chainPEM: chainPEM, keyPEM: keyPEM, clientCAsPEM: clientCAsPEM, extraLocations: extraLocations)
        }
    }

    /// Stops nginx off the cooperative pool, for the same reason as ``start(chainPEM:keyPEM:clientCAsPEM:)``.
    func stopInBackground() {
        OffPool.detach { self.stop() }
    }

    /// Stops nginx (the wrapper then exits) and removes its files.
    func stop() {
        if let text = try? String(contentsOf: directory.appendingPathComponent("child.pid"), encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(pid, SIGKILL)
        } else {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The requests nginx served, in order: the serial number of the connection each came on, the protocol
    /// (`HTTP/2.0`, `HTTP/1.1`), the status and the request target. nginx writes a line when a request ends.
    var accessLog: [(connection: Int, protocol: String, status: Int, target: String)] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
            guard parts.count == 4, let connection = Int(parts[0]), let status = Int(parts[2]) else { return nil }
            return (connection, parts[1], status, parts[3])
        }
    }

    /// The lines nginx logged as errors (for failure messages).
    var errorLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    private func waitUntilListening() throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if Self.canConnect(port: port) { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        let log = errorLog
        stop()
        throw NginxError.didNotStart(log)
    }

    /// A port free a moment ago (nginx binds it next; if another server took it meanwhile, nginx fails to start).
    static func freePort() throws -> Int {
        try RefusingPort().port
    }

    static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = RefusingPort.loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// This process's TCP sockets connected (or connecting, or half-closed) to `port` on 127.0.0.1: the entries of
    /// `/proc/net/tcp` whose remote port is `port` and whose inode is one of this process's file descriptors.
    static func openSockets(toPort port: Int) -> Int {
        var inodes: Set<String> = []
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in fds {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                target.hasPrefix("socket:[")
            else { continue }
            inodes.insert(String(target.dropFirst(8).dropLast()))
        }
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return -1 }
        let wantedPort = String(format: "%04X", port)
        var count = 0
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9 else { continue }
            let remote = fields[2].split(separator: ":")
            guard remote.count == 2, remote[1] == wantedPort else { continue }
            // 01 established, 02 syn-sent, 04 fin-wait-1, 08 close-wait: the descriptor is still held.
            if inodes.contains(String(fields[9])), ["01", "02", "04", "08"].contains(String(fields[3])) { count += 1 }
        }
        return count
    }
}

enum NginxError: Error {
    case noPort
    case didNotStart(String)
}

import Foundation
import Testing

@testable import CourierCLI

/// `--unix-socket PATH`, as curl spells it: the request reaches a server listening on a Unix-domain socket with the
/// URL's host in `Host` and its path and query intact; a path with nothing there, or with something that is not a
/// socket, is refused before anything is sent.
struct CLIUnixSocketTests {
    /// An HTTP server on the Unix socket given as its second argument, answering each GET with what it received;
    /// prints 0 once it listens and exits when the test process is gone.
    private static let server = """
        import http.server, os, socketserver, sys, threading, time
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = ("host=%s path=%s" % (self.headers.get("Host"), self.path)).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True
            def get_request(self):
                request, _ = super().get_request()
                return request, ("unix", 0)
        server = Server(sys.argv[2], Handler)
        def watch(parent):
            while True:
                try:
                    os.kill(parent, 0)
                except OSError:
                    os._exit(0)
                time.sleep(0.5)
        threading.Thread(target=watch, args=(int(sys.argv[1]),), daemon=True).start()
        print(0, flush=True)
        server.serve_forever()
        """

    @Test func theRequestGoesToTheSocketWithTheURLsHost() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-unix-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("api.sock").path
        let (process, _) = try await PythonServerProcess.start(Self.server, arguments: [socket])
        defer { process.terminate() }
        let result = try await CourierProcess.run([
            "--unix-socket", socket, "http://api.internal:8080/v1/items", "q==a b",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("host=api.internal:8080 path=/v1/items?q=a%20b"), "stdout: \(result.stdout)")
    }

    @Test func aPathWithNoSocketIsRefused() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("courier-none-\(UUID()).sock")
        let result = try await CourierProcess.run(["--unix-socket", missing.path, "http://localhost/"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("no such socket"), "stderr: \(result.stderr)")
        let notSocket = try await CourierProcess.run(["--unix-socket", "/etc/hostname", "http://localhost/"])
        #expect(notSocket.status != 0)
        #expect(notSocket.stderr.contains("not a socket"), "stderr: \(notSocket.stderr)")
    }
}

import Foundation

/// A Python server on 127.0.0.1 that is every host at once: used as the client's HTTP proxy, it answers requests
/// for `home.example.org`, `evil.example.com` or any other name itself (after a `CONNECT` or in absolute form), so
/// cookie tests can cross sites without DNS.
///
/// - any path with `?to=URL` answers `302` to `to`, with each `c` parameter as a `Set-Cookie` field;
/// - any path with `c` parameters (and no `to`) answers `200` with them as `Set-Cookie` fields;
/// - anything else answers `200` with the request's `Cookie` field as the body (empty when there is none).
///
/// Every request is logged as `HOST PATH COOKIE` lines in ``requests``.
final class CookieOriginServer: Sendable {
    /// `http://127.0.0.1:<port>`, to give as the proxy.
    let proxyURL: URL
    private let process: Process
    private let log: URL

    private static let script = """
        import os, socket, sys, threading, urllib.parse
        log = open(sys.argv[2], "a", buffering=1)
        def answer(conn, host, target, headers):
            url = urllib.parse.urlsplit(target)
            if url.netloc:
                host = url.netloc
            query = urllib.parse.parse_qs(url.query)
            cookie = headers.get("cookie", "")
            log.write("%s %s %s\\n" % (host.split(":")[0], url.path, cookie))
            fields = ["Set-Cookie: " + value for value in query.get("c", [])]
            if "to" in query:
                status, body = "302 Found", b""
                fields.append("Location: " + query["to"][0])
            elif fields:
                status, body = "200 OK", b"ok"
            else:
                status, body = "200 OK", cookie.encode("latin-1")
            head = ["HTTP/1.1 " + status, "Content-Length: %d" % len(body)] + fields
            conn.sendall(("\\r\\n".join(head) + "\\r\\n\\r\\n").encode("utf-8") + body)
        def serve(conn):
            reader = conn.makefile("rb")
            host = ""
            try:
                while True:
                    line = reader.readline()
                    if not line:
                        return
                    method, target, _ = line.decode("latin-1").split(" ", 2)
                    headers = {}
                    while True:
                        field = reader.readline().decode("latin-1").rstrip("\\r\\n")
                        if not field:
                            break
                        name, _, value = field.partition(":")
                        headers[name.strip().lower()] = value.strip()
                    if method == "CONNECT":
                        host = target
                        conn.sendall(b"HTTP/1.1 200 Connection established\\r\\n\\r\\n")
                        continue
                    answer(conn, headers.get("host", host), target, headers)
            except (OSError, ValueError):
                pass
            finally:
                conn.close()
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        print(listener.getsockname()[1], flush=True)
        def watch():
            import time
            while os.getppid() == int(sys.argv[1]):
                time.sleep(0.2)
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        """

    private init(proxyURL: URL, process: Process, log: URL) {
        self.proxyURL = proxyURL
        self.process = process
        self.log = log
    }

    static func start() async throws -> CookieOriginServer {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("cookie-origin-\(UUID()).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let (process, port) = try await PythonServerProcess.start(script, arguments: [log.path])
        guard let url = URL(string: "http://127.0.0.1:\(port)") else {
            process.terminate()
            throw PythonServerProcess.DidNotStart()
        }
        return CookieOriginServer(proxyURL: url, process: process, log: log)
    }

    /// Every request so far: the host it was for, its path and its `Cookie` field ("" for none).
    var requests: [(host: String, path: String, cookie: String)] {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            return (String(parts[0]), String(parts[1]), parts.count > 2 ? String(parts[2]) : "")
        }
    }

    /// `route` with the query ``query(to:setting:)`` makes.
    static func path(_ route: String, to target: String? = nil, setting fields: [String]) -> String {
        route + "?" + query(to: target, setting: fields)
    }

    /// A query that redirects to `target` (when given) and sets `fields`, every byte but unreserved ones
    /// percent-encoded so that `+`, `;`, `&` and controls reach the server as themselves.
    static func query(to target: String?, setting fields: [String]) -> String {
        let unreserved = CharacterSet(
            charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        let items = (target.map { [("to", $0)] } ?? []) + fields.map { ("c", $0) }
        return items.map { name, value in
            name + "=" + (value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
        }.joined(separator: "&")
    }

    func stop() {
        process.terminate()
        try? FileManager.default.removeItem(at: log)
    }
}

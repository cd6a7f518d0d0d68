import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A multipart upload's response is streamed like any other: against a server that answers with an endless body,
/// `courier --multipart … | head -c 100` ends when `head` does, and no run leaves a file in the temporary folder,
/// whether it ends by a closed pipe or by a signal.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CLIUploadResponseTests {
    /// A Python server on 127.0.0.1 that reads a request (head and `Content-Length` body) and answers with an
    /// endless `application/octet-stream` body, as fast as the client takes it.
    final class EndlessServer: Sendable {
        let url: URL
        private let process: Process

        private static let script = """
            import os, socket, sys, threading
            def serve(connection):
                try:
                    data = b""
                    while b"\\r\\n\\r\\n" not in data:
                        more = connection.recv(65536)
                        if not more:
                            return
                        data += more
                    head, _, body = data.partition(b"\\r\\n\\r\\n")
                    length = 0
                    for line in head.split(b"\\r\\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value.strip())
                    while len(body) < length:
                        more = connection.recv(65536)
                        if not more:
                            return
                        body += more
                    connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/octet-stream\\r\\n"
                                       b"Content-Length: 1000000000000\\r\\n\\r\\n")
                    block = b"x" * 65536
                    while True:
                        connection.sendall(block)
                except OSError:
                    pass
                finally:
                    connection.close()
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
            print(listener.getsockname()[1], flush=True)
            def watch():
                # Gone with the test process, even one that crashed.
                import time
                while os.getppid() == int(sys.argv[1]):
                    time.sleep(0.2)
                os._exit(0)
            threading.Thread(target=watch, daemon=True).start()
            while True:
                connection, _ = listener.accept()
                threading.Thread(target=serve, args=(connection,), daemon=True).start()
            """

        private init(url: URL, process: Process) {
            self.url = url
            self.process = process
        }

        static func start() async throws -> EndlessServer {
            let (process, port) = try await PythonServerProcess.start(script)
            guard let url = URL(string: "http://127.0.0.1:\(port)/upload") else {
                process.terminate()
                throw PythonServerProcess.DidNotStart()
            }
            return EndlessServer(url: url, process: process)
        }

        /// Stops the server without waiting for it.
        func stop() {
            process.terminate()
        }
    }

    /// A fresh folder, a file to upload in it, and a folder to be the run's `TMPDIR`.
    private func folders() throws -> (root: URL, upload: URL, temporary: URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID())")
        let temporary = root.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let upload = root.appendingPathComponent("report.txt")
        try Data(repeating: UInt8(ascii: "r"), count: 10_000).write(to: upload)
        return (root, upload, temporary)
    }

    /// Every regular file under `folder`.
    private func files(under folder: URL) -> [String] {
        let walker = FileManager.default.enumerator(atPath: folder.path)
        var found: [String] = []
        while let path = walker?.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent(path).path, isDirectory: &isFolder),
                !isFolder.boolValue
            {
                found.append(path)
            }
        }
        return found
    }

    @Test func anEndlessAnswerStopsWhenTheReaderDoes() async throws {
        let server = try await EndlessServer.start()
        defer { server.stop() }
        let (root, upload, temporary) = try folders()
        defer { try? FileManager.default.removeItem(at: root) }
        let pipe = Pipe()
        // `head -c 100`: read 100 bytes, then close the pipe.
        let head = Task {
            try await OffPool.run { () -> Data in
                let data = (try? pipe.fileHandleForReading.read(upToCount: 100)) ?? Data()
                try? pipe.fileHandleForReading.close()
                return data
            }
        }
        // The answer never ends: only the closed pipe can end the run before the 30 s limit kills it.
        let result = try await CourierProcess.run(
            ["--multipart", "POST", server.url.absoluteString, "f@\(upload.path)"],
            environment: ["TMPDIR": temporary.path], limit: 30, stdout: pipe.fileHandleForWriting)
        try? pipe.fileHandleForWriting.close()
        let shown = try await head.value
        #expect(shown == Data(repeating: UInt8(ascii: "x"), count: 100))
        #expect(!result.killedBySignal, "still running after 30 s: the answer went somewhere else than the pipe")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(files(under: temporary).isEmpty, "left behind: \(files(under: temporary))")
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalLeavesNoTemporaryFile(signal: Int32) async throws {
        let server = try await EndlessServer.start()
        defer { server.stop() }
        let (root, upload, temporary) = try folders()
        defer { try? FileManager.default.removeItem(at: root) }
        let process = Process()
        process.executableURL = try CourierProcess.executable()
        process.arguments = ["--multipart", "POST", server.url.absoluteString, "f@\(upload.path)"]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = temporary.path
        process.environment = environment
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let ended = AsyncStream<Void> { continuation in
            process.terminationHandler = { _ in continuation.finish() }
        }
        try process.run()
        // Long enough for the answer to be flowing (the upload is 10 KB on loopback); the signal comes mid-body.
        try await Task.sleep(for: .seconds(2))
        #expect(process.isRunning, "an endless answer ended by itself")
        kill(process.processIdentifier, signal)
        for await _ in ended {}
        #expect(files(under: temporary).isEmpty, "left behind: \(files(under: temporary))")
    }
}

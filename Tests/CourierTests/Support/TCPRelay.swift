import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP relay on 127.0.0.1 to another local port, in Python, that a test can take away: a server that is there
/// while a session is recorded and gone when it is replayed (``stop()``), while the server behind it (a shared
/// one, such as ``HTTPBin``) keeps running for the other tests.
///
/// It passes bytes through unchanged, so the server sees the relay's `Host` and the client the server's answers.
final class TCPRelay: Sendable {
    /// The relay's port.
    let port: Int
    private let process: Process

    private static let script = """
        import asyncio, os, sys
        target = int(sys.argv[2])
        async def pipe(reader, writer):
            try:
                while True:
                    data = await reader.read(65536)
                    if not data:
                        break
                    writer.write(data)
                    await writer.drain()
            except Exception:
                pass
            finally:
                writer.close()
        async def relay(client_reader, client_writer):
            try:
                server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target)
            except OSError:
                client_writer.close()
                return
            await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))
        async def main():
            server = await asyncio.start_server(relay, "127.0.0.1", 0)
            print(server.sockets[0].getsockname()[1], flush=True)
            # Gone with the test process, even one that crashed.
            while os.getppid() == int(sys.argv[1]):
                await asyncio.sleep(0.2)
        asyncio.run(main())
        """

    private init(port: Int, process: Process) {
        (self.port, self.process) = (port, process)
    }

    /// A relay to `127.0.0.1:<target>`, listening once this returns.
    static func start(to target: Int) async throws -> TCPRelay {
        let (process, port) = try await PythonServerProcess.start(script, arguments: ["\(target)"])
        return TCPRelay(port: port, process: process)
    }

    /// `http://127.0.0.1:<port>/`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/") ?? URL(fileURLWithPath: "/") }

    /// Kills the relay, its connections with it, and returns once its port is free, held by a ``RefusingPort``:
    /// a connection to it is then refused, and no server a test running in parallel starts can take it.
    ///
    /// - Throws: ``RefusingPortError`` when the port is still taken after 10 s.
    func stop() async throws -> RefusingPort {
        // SIGKILL: the test process's blocked signals are inherited, and Python would ignore SIGTERM (as
        // ProxyServer found).
        kill(process.processIdentifier, SIGKILL)
        let port = port
        // Binding fails while the relay still listens; waiting for that is blocking work, off the pool.
        return try await OffPool.run {
            let deadline = Date().addingTimeInterval(10)
            while true {
                if let held = try? RefusingPort(holding: port) { return held }
                guard Date() < deadline else { throw RefusingPortError() }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }
}

import Foundation

/// The `websockets` package's server (from PyPI; `bash .ci/run` installs it), a second WebSocket implementation
/// independent of NIO's, run as an echo server on 127.0.0.1 with a free port and stopped by the test.
///
/// It echoes every message; `close CODE REASON` makes it close with that code and reason.
final class PythonWebSocketServer: Sendable {
    let url: URL
    private let process: Process

    private static let script = """
        import asyncio, os, sys, websockets
        async def echo(socket):
            async for message in socket:
                if isinstance(message, str) and message.startswith("close "):
                    _, code, reason = message.split(" ", 2)
                    await socket.close(int(code), reason)
                    return
                await socket.send(message)
        async def main():
            async with websockets.serve(echo, "127.0.0.1", 0, max_size=4 << 20, ping_interval=None) as server:
                print(server.sockets[0].getsockname()[1], flush=True)
                # Gone with the test process, even one that crashed.
                while os.getppid() == int(sys.argv[1]):
                    await asyncio.sleep(0.2)
        asyncio.run(main())
        """

    private init(url: URL, process: Process) {
        self.url = url
        self.process = process
    }

    static func start() async throws -> PythonWebSocketServer {
        let (process, port) = try await PythonServerProcess.start(script)
        guard let url = URL(string: "ws://127.0.0.1:\(port)/") else {
            process.terminate()
            throw PythonServerProcess.DidNotStart()
        }
        return PythonWebSocketServer(url: url, process: process)
    }

    /// Stops the server (without waiting: `waitUntilExit` can block a cooperative thread for good on Linux).
    func stop() {
        process.terminate()
    }
}

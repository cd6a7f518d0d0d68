import Foundation
import Testing

@testable import CourierCLI

/// `courier --curl`: the printed command, run by curl, sends what `courier` sends, and `--curl` itself sends nothing.
struct CLICurlTests {
    @Test func thePrintedCommandSendsWhatCourierSends() async throws {
        let server = try await ScriptedServer.start([.init(status: 200), .init(status: 200)])
        let arguments = [
            "PUT", server.url("things/1").absoluteString, "name=Ada's", "count:=3", "X-Trace:abc", "-a", "u:p",
        ]
        let sent = try await CourierProcess.run(arguments)
        #expect(sent.status == 0, "stderr: \(sent.stderr)")
        let printed = try await CourierProcess.run(["--curl"] + arguments)
        #expect(printed.status == 0, "stderr: \(printed.stderr)")
        #expect(server.received.count == 1, "--curl sent nothing")
        #expect(printed.stdout.hasPrefix("curl \\\n"), "\(printed.stdout)")
        let ran = try await ChildProcess.shell(
            printed.stdout.trimmingCharacters(in: .newlines) + " --silent --output /dev/null")
        #expect(ran.status == 0)
        try await server.stop()
        let received = server.received
        #expect(received.count == 2)
        guard received.count == 2 else { return }
        let (courier, curl) = (received[0], received[1])
        #expect(curl.method == "PUT" && curl.path == courier.path && curl.bodySHA256 == courier.bodySHA256)
        for name in ["authorization", "x-trace", "content-type", "accept", "user-agent"] {
            #expect(curl.headers[name] == courier.headers[name], "\(name)")
        }
    }
}

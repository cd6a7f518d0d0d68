import Courier
import Foundation
import Testing

@testable import CourierCLI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The paths a multipart body takes once it is encoded (a streamed upload with a progress bar, and `--offline`
/// printing), run in process with a streamed body of another kind.
@Suite(.timeLimit(.minutes(2)))
struct CLIRunnerTests {
    /// What a console printed. `@unchecked Sendable`: both buffers are only touched under `lock`.
    final class Captured: @unchecked Sendable {
        private let lock = NSLock()
        private var out = Data()
        private var err = Data()

        func append(_ data: Data, toOut: Bool) {
            lock.lock()
            defer { lock.unlock() }
            if toOut { out.append(data) } else { err.append(data) }
        }

        var stdout: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
        var stderr: String { lock.withLock { String(decoding: err, as: UTF8.self) } }

        func console() -> Console {
            Console(
                stdoutIsTerminal: false, stderrIsTerminal: false, colorAllowed: false, forceProgress: true,
                writeOut: { self.append($0, toOut: true) }, writeErr: { self.append($0, toOut: false) })
        }
    }

    @Test func streamedBodiesAreUploadedWithAProgressBar() async throws {
        let captured = Captured()
        var request = URLRequest(url: try await HTTPBin.url("post"))
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let manager = SessionManager(configuration: .ephemeral)
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "test.upload")
        let (response, task, _) = try await Upload.send(
            request, body: .data(Data(repeating: UInt8(ascii: "a"), count: 300_000)), manager: manager,
            bar: ProgressBar(console: captured.console(), label: "upload"))
        #expect(response.statusCode == 200)
        var data = Data()
        for try await piece in task.chunks { data.append(piece) }
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((json["data"] as? String)?.count == 300_000)
        #expect(
            captured.stderr.contains("upload  [########################]  100%  293.0 KiB / 293.0 KiB"),
            "\(captured.stderr)")
        #expect(captured.stderr.hasSuffix("\n"))
    }

    @Test func offlinePrintsAStreamedBody() async throws {
        let captured = Captured()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-offline-\(UUID()).txt")
        try Data("hello".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let options = RequestOptions(
            plan: try RequestPlan(arguments: ["PUT", ":1/up"], requestedMode: nil), print: try PrintOptions("HB"),
            pretty: .none, offline: true, download: nil, timeout: nil, maxRedirects: 30, follow: false, auth: nil,
            checkStatus: false, tls: TLSOptions())
        var request = URLRequest(url: try #require(URL(string: "http://localhost:1/up")))
        request.httpMethod = "PUT"
        try await RequestRunner(options: options, console: captured.console())
            .printRequest(PreparedRequest(urlRequest: request, body: try .file(file)), toStdout: true)
        #expect(captured.stdout == "PUT /up HTTP/1.1\nHost: localhost:1\nContent-Length: 5\n\nhello\n")
    }
}

import Crypto
import Foundation
import Testing

@testable import CourierCLI

/// The whole body from standard input, `@FILE` or `--raw`, by HTTPie's rules: each arrives byte for byte, a file with
/// its length, and two bodies at once are refused with a message that says what to do.
struct CLIRawBodyTests {
    /// Every byte value, twice: a body that is not text.
    private static let binary = Data((0..<512).map { UInt8($0 % 256) })

    private static func digest(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// A pipe holding `data`, its write end closed, for a child's standard input.
    private static func pipe(_ data: Data) throws -> FileHandle {
        let pipe = Pipe()
        try pipe.fileHandleForWriting.write(contentsOf: data)
        try pipe.fileHandleForWriting.close()
        return pipe.fileHandleForReading
    }

    private static func file(_ data: Data, named name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-raw-\(UUID())-\(name)")
        try data.write(to: url)
        return url
    }

    @Test func pipedStandardInputIsTheBodyByteForByteAndMakesAPost() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let result = try await CourierProcess.run([server.url("in").absoluteString], stdin: try Self.pipe(Self.binary))
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let received = try #require(server.received.first)
        #expect(received.method == "POST")
        #expect(received.bodyCount == Self.binary.count)
        #expect(received.bodySHA256 == Self.digest(Self.binary))
        #expect(received.headers["content-type"] == nil)
        try await server.stop()
    }

    @Test func standardInputFromAFileGoesWithItsLength() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let file = try Self.file(Self.binary, named: "body.bin")
        defer { try? FileManager.default.removeItem(at: file) }
        let input = try FileHandle(forReadingFrom: file)
        let result = try await CourierProcess.run(["PUT", server.url("in").absoluteString], stdin: input)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let received = try #require(server.received.first)
        #expect(received.method == "PUT")
        #expect(received.headers["content-length"] == "\(Self.binary.count)")
        #expect(received.bodySHA256 == Self.digest(Self.binary))
        try await server.stop()
    }

    @Test func anAtFileArgumentIsTheBodyWithATypeFromItsExtension() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let json = Data(#"{"a":[1,2,3]}"#.utf8)
        let file = try Self.file(json, named: "data.json")
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await CourierProcess.run([server.url("in").absoluteString, "@" + file.path])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let received = try #require(server.received.first)
        #expect(received.method == "POST")
        #expect(received.headers["content-type"] == "application/json")
        #expect(received.headers["content-length"] == "\(json.count)")
        #expect(received.bodySHA256 == Self.digest(json))
        try await server.stop()
    }

    @Test func rawTextIsTheBodyAndFormSetsItsType() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let result = try await CourierProcess.run([
            "--form", "--raw", "a=1&b=two", "PATCH", server.url("in").absoluteString, "X-Trace:7",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let received = try #require(server.received.first)
        #expect(received.method == "PATCH")
        #expect(received.headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(received.headers["x-trace"] == "7")
        #expect(received.bodySHA256 == Self.digest(Data("a=1&b=two".utf8)))
        try await server.stop()
    }

    @Test func aHeaderItemSetsTheTypeOfARawBody() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let result = try await CourierProcess.run(
            [server.url("in").absoluteString, "Content-Type:text/csv"], stdin: try Self.pipe(Data("a,b\n1,2\n".utf8)))
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(server.received.first?.headers["content-type"] == "text/csv")
        try await server.stop()
    }

    @Test func standardInputWithDataFieldsIsRefusedAndNothingIsSent() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let result = try await CourierProcess.run(
            [server.url("in").absoluteString, "name=x"], stdin: try Self.pipe(Data("piped".utf8)))
        #expect(result.status != 0)
        #expect(result.stderr.contains("standard input has data"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("--ignore-stdin"))
        #expect(server.received.isEmpty)
        try await server.stop()
    }

    @Test(arguments: ["--raw", "@FILE"])
    func standardInputBesideAnotherWholeBodyIsRefusedAndNothingIsSent(other: String) async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let file = try Self.file(Data("from the file".utf8), named: "body.txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let url = server.url("in").absoluteString
        let arguments = other == "--raw" ? ["--raw", "from the flag", url] : [url, "@" + file.path]
        let result = try await CourierProcess.run(arguments, stdin: try Self.pipe(Data("piped".utf8)))
        #expect(result.status != 0)
        #expect(
            result.stderr.contains("standard input has data, and the request already has \(other)"),
            "stderr: \(result.stderr)")
        #expect(result.stderr.contains("--ignore-stdin"), "stderr: \(result.stderr)")
        #expect(server.received.isEmpty)
        try await server.stop()
    }

    @Test func jsonSetsTheTypeOfAWholeBodyAndAHeaderItemStillWins() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        // A .txt extension would otherwise give text/plain: --json says what the bytes are.
        let file = try Self.file(Data(#"{"a":1}"#.utf8), named: "body.txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let url = server.url("in").absoluteString
        let raw = try await CourierProcess.run(["--json", "--raw", #"{"a":1}"#, url])
        let atFile = try await CourierProcess.run(["--json", url, "@" + file.path])
        let header = try await CourierProcess.run(["--json", "--raw", "a,b", url, "Content-Type:text/csv"])
        for result in [raw, atFile, header] { #expect(result.status == 0, "stderr: \(result.stderr)") }
        let types = server.received.map { $0.headers["content-type"] }
        #expect(types == ["application/json", "application/json", "text/csv"])
        #expect(server.received.allSatisfy { $0.bodyCount > 0 })
        try await server.stop()
    }

    @Test func ignoreStdinSendsTheDataFieldsInstead() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        let result = try await CourierProcess.run(
            ["--ignore-stdin", server.url("in").absoluteString, "name=x"], stdin: try Self.pipe(Data("piped".utf8)))
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(server.received.first?.bodySHA256 == Self.digest(Data(#"{"name":"x"}"#.utf8)))
        try await server.stop()
    }

    @Test func anEmptyStandardInputIsNoBodySoDataFieldsStillGo() async throws {
        let server = try await ScriptedServer.start([.init(status: 200, body: "ok")])
        // CourierProcess gives /dev/null by default, as cron and CI runners do.
        let fields = try await CourierProcess.run([server.url("in").absoluteString, "name=x"])
        let empty = try await CourierProcess.run([server.url("in").absoluteString], stdin: try Self.pipe(Data()))
        #expect(fields.status == 0, "stderr: \(fields.stderr)")
        #expect(empty.status == 0, "stderr: \(empty.stderr)")
        #expect(server.received.first?.bodySHA256 == Self.digest(Data(#"{"name":"x"}"#.utf8)))
        #expect(server.received.last?.method == "GET")
        #expect(server.received.last?.bodyCount == 0)
        try await server.stop()
    }

    @Test(arguments: [
        (["--raw", "x", "@/etc/hostname"], "choose one"),
        (["--raw", "x", "name=y"], "cannot be sent with data fields"),
        (["--multipart", "--raw", "x"], "cannot be multipart"),
    ])
    func twoBodiesAreRefused(arguments: [String], message: String) async throws {
        let result = try await CourierProcess.run(["--offline", "http://127.0.0.1:9/"] + arguments)
        #expect(result.status != 0)
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
    }

    @Test func resolvingWithoutAProcess() throws {
        // A pipe a slow writer has not written to yet is not waited for when another body is given.
        let fields = try RawBody.resolve(
            raw: nil, file: nil, hasDataFields: true, ignoresInput: false, input: .stream(ready: false),
            readPipe: {
                Issue.record("read a pipe that was not ready")
                return Data()
            })
        #expect(fields == nil)
        let terminal = try RawBody.resolve(
            raw: nil, file: nil, hasDataFields: false, ignoresInput: false, input: .terminal)
        #expect(terminal == nil)
        let emptyFile = try RawBody.resolve(
            raw: "t", file: nil, hasDataFields: false, ignoresInput: false, input: .file(remaining: 0))
        guard case .text("t") = emptyFile else {
            Issue.record("an empty redirected file took the place of --raw")
            return
        }
    }
}

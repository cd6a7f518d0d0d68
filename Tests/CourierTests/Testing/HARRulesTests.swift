import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The rules of ``RecordingTransport`` and ``ReplayTransport`` that the httpbin session does not reach: redaction
/// of the caller's names and of cookies, bodies past the limit, matching by body, and repeats outside strict mode.
/// The recordings here are of a ``StubTransport``: no server.
@Suite struct HARRulesTests {
    private static let base = URL(string: "https://api.example.test/")!

    private func manager(_ transport: any Transport) -> HTTPSessionManager {
        HTTPSessionManager(baseURL: Self.base, configuration: .ephemeral, transport: transport)
    }

    @Test("Redaction: the default fields, the caller's names, and the cookie lists made from them")
    func redaction() async throws {
        let stubs = StubTransport()
        stubs.stub(
            .get("/login"),
            with: StubResponse.text("in").header("Set-Cookie", "sid=server-secret; Path=/; HttpOnly; Secure"))
        let recorder = RecordingTransport(wrapping: stubs, redactedHeaders: ["X-Api-Key"])
        let manager = manager(recorder)
        _ = try await manager.send(
            "GET", "login", headers: ["X-Api-Key": "key-secret", "Cookie": "pref=client-secret", "X-Other": "kept"],
            serializer: HTTPResponseSerializer())
        manager.invalidate(cancelingTasks: true)
        let entry = try #require(recorder.archive.log.entries.first)
        let encoded = String(decoding: try JSONEncoder().encode(recorder.archive), as: UTF8.self)
        for secret in ["server-secret", "key-secret", "client-secret"] {
            #expect(!encoded.contains(secret), "\(secret) is in the archive")
        }
        #expect(entry.request.headers.contains { $0.name == "X-Other" && $0.value == "kept" })
        #expect(entry.request.cookies.map(\.name) == ["pref"] && entry.request.cookies.first?.value == "REDACTED")
        let cookie = try #require(entry.response.cookies.first)
        #expect(cookie.name == "sid" && cookie.value == "REDACTED" && cookie.httpOnly == true && cookie.path == "/")
    }

    @Test("Proxy-Authorization is redacted with no redactedHeaders given, as Authorization is")
    func proxyAuthorizationByDefault() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/through-proxy"), with: .text("ok"))
        let recorder = RecordingTransport(wrapping: stubs)
        let manager = manager(recorder)
        let credentials = "Basic cHJveHktdXNlcjpwcm94eS1zZWNyZXQ="
        _ = try await manager.send(
            "GET", "through-proxy", headers: ["Proxy-Authorization": credentials, "X-Other": "kept"],
            serializer: HTTPResponseSerializer())
        manager.invalidate(cancelingTasks: true)
        // The field reached the transport, so the redaction below is the recorder's doing, not the session's.
        #expect(stubs.requests.first?.headers["Proxy-Authorization"] == credentials)
        let entry = try #require(recorder.archive.log.entries.first)
        #expect(
            entry.request.headers.filter { $0.name.lowercased() == "proxy-authorization" }.map(\.value) == ["REDACTED"])
        #expect(entry.request.headers.contains { $0.name == "X-Other" && $0.value == "kept" })
        let encoded = String(decoding: try JSONEncoder().encode(recorder.archive), as: UTF8.self)
        #expect(!encoded.contains("cHJveHktdXNlcjpwcm94eS1zZWNyZXQ="), "the credentials are in the archive")
    }

    @Test("A body past maximumBodySize is kept cut, with a comment; the session still gets all of it")
    func bodyLimit() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/big"), with: .status(200, body: Data(repeating: 7, count: 5000)))
        let recorder = RecordingTransport(wrapping: stubs, maximumBodySize: 1000)
        let manager = manager(recorder)
        let response = try await manager.send("GET", "big", serializer: HTTPResponseSerializer())
        manager.invalidate(cancelingTasks: true)
        #expect(response.value?.count == 5000)
        let entry = try #require(recorder.archive.log.entries.first)
        #expect(entry.response.content.data.count == 1000)
        #expect(entry.comment?.contains("cut to its first 1000 bytes") == true)
    }

    @Test("A body that fails midway is recorded with what arrived, and says so")
    func failedBody() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/cut"), with: StubResponse.text("0123456789").losingConnection(afterBytes: 4))
        let recorder = RecordingTransport(wrapping: stubs)
        let manager = manager(recorder)
        _ = await thrownCourierError { _ = try await manager.send("GET", "cut", serializer: HTTPResponseSerializer()) }
        manager.invalidate(cancelingTasks: true)
        let entry = try #require(recorder.archive.log.entries.first)
        #expect(entry.response.content.text == "0123")
        #expect(entry.comment?.contains("the body ended early") == true)
    }

    private static func entry(_ method: String, _ path: String, body: String?, answer: String) -> HTTPArchive.Entry {
        var request = HTTPArchive.Request(
            method: method, url: base.appendingPathComponent(path).absoluteString, httpVersion: "HTTP/1.1")
        request.postData = body.map { HTTPArchive.PostData(mimeType: "application/json", text: $0) }
        return HTTPArchive.Entry(
            startedDateTime: "2026-11-27T10:00:00.000Z", time: 1, request: request,
            response: HTTPArchive.Response(
                status: 200, statusText: "OK", httpVersion: "HTTP/1.1",
                content: HTTPArchive.Content(size: answer.utf8.count, mimeType: "text/plain", text: answer)),
            timings: HTTPArchive.Timings())
    }

    @Test("matchesBody: each request gets the entry with its body, in any order")
    func matchesBody() async throws {
        var archive = HTTPArchive()
        archive.log.entries = [
            Self.entry("POST", "search", body: #"{"q":"a"}"#, answer: "results for a"),
            Self.entry("POST", "search", body: #"{"q":"b"}"#, answer: "results for b"),
        ]
        let replay = ReplayTransport(archive: archive, matchesBody: true, strict: true)
        let manager = manager(replay)
        for letter in ["b", "a"] {
            var request = URLRequest(url: Self.base.appendingPathComponent("search"))
            request.httpMethod = "POST"
            request.httpBody = Data(#"{"q":"\#(letter)"}"#.utf8)
            let response = try await manager.send(request, serializer: HTTPResponseSerializer())
            #expect(String(decoding: response.value ?? Data(), as: UTF8.self) == "results for \(letter)")
        }
        try replay.verifyAllPlayed()
        manager.invalidate(cancelingTasks: true)
    }

    @Test("Outside strict mode the last matching entry answers again; strict mode reports what was left unplayed")
    func repeatsAndUnplayed() async throws {
        var archive = HTTPArchive()
        archive.log.entries = [
            Self.entry("GET", "n", body: nil, answer: "first"), Self.entry("GET", "n", body: nil, answer: "second"),
            Self.entry("GET", "never", body: nil, answer: "unasked"),
        ]
        let replay = ReplayTransport(archive: archive)
        let manager = manager(replay)
        var answers: [String] = []
        for _ in 0..<3 {
            let response = try await manager.send("GET", "n", serializer: HTTPResponseSerializer())
            answers.append(String(decoding: response.value ?? Data(), as: UTF8.self))
        }
        #expect(answers == ["first", "second", "second"])
        #expect(replay.unplayedEntries.map(\.request.url) == ["https://api.example.test/never"])
        #expect(throws: StubError.self) { try replay.verifyAllPlayed() }
        manager.invalidate(cancelingTasks: true)
    }
}

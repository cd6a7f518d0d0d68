import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``RecordingTransport`` around each real transport against httpbin writes a HAR 1.2 file; ``ReplayTransport``
/// answers the same session from that file alone, byte for byte; a browser's archive, written by hand from the
/// specification, replays too.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct HARRecordReplayTests {
    /// What one call of the session script gave: enough to tell two runs apart.
    struct Outcome: Equatable, CustomStringConvertible {
        var statusCode: Int
        /// Every response header field, by lowercased name. None is left out: the replay answers with the fields
        /// recorded, `Date`, `Connection` and `Server` included, so even those must come back as they were.
        var headers: [String: String]
        var body: Data
        var errorCode: Int?
        var exchanges: Int
        var redirects: Int
        var transactions: Int
        var bytesReceived: Int64

        init(statusCode: Int, response: HTTPURLResponse?, body: Data, errorCode: Int? = nil, metrics: TaskMetrics?) {
            self.statusCode = statusCode
            var headers: [String: String] = [:]
            for (name, value) in response?.allHeaderFields ?? [:] { headers["\(name)".lowercased()] = "\(value)" }
            self.headers = headers
            self.body = body
            self.errorCode = errorCode
            exchanges = metrics?.exchangeCount ?? -1
            redirects = metrics?.redirectCount ?? -1
            transactions = metrics?.transactionMetrics.count ?? -1
            bytesReceived = metrics?.countOfBytesReceived ?? -1
        }

        var description: String {
            "\(statusCode) \(headers.keys.sorted()) \(body.count) bytes error \(errorCode.map(String.init) ?? "none") "
                + "exchanges \(exchanges) redirects \(redirects) transactions \(transactions) received \(bytesReceived)"
        }
    }

    private static func outcome<Value>(_ response: DataResponse<Value>, body: Data? = nil) -> Outcome {
        Outcome(
            statusCode: response.statusCode, response: response.response, body: body ?? response.data,
            metrics: response.taskMetrics)
    }

    /// JSON, a redirect, a 404, a gzip body, a multipart upload, a secret-bearing request and a download, in turn.
    private static func runScript(base: URL, transport: any Transport) async throws -> [Outcome] {
        let manager = HTTPSessionManager(baseURL: base, configuration: .ephemeral, transport: transport)
        defer { manager.invalidate(cancelingTasks: true) }
        let serializer = HTTPResponseSerializer()
        var outcomes: [Outcome] = []
        outcomes.append(outcome(try await manager.send("GET", "json", serializer: serializer)))
        outcomes.append(outcome(try await manager.send("GET", "redirect/1", serializer: serializer)))
        // Through the callback API, whose failure block hands over the task: the async call's error carries no
        // metrics, and the 404's are compared like the others'.
        manager.responseSerializer = serializer
        manager.completionQueue = DispatchQueue(label: "HARRecordReplayTests.completion")
        let (task, failure) = await withCheckedContinuation {
            (continuation: CheckedContinuation<(DataTask?, CourierError?), Never>) in
            manager.get(
                "status/404", success: { task, _ in continuation.resume(returning: (task, nil)) },
                failure: { task, error in continuation.resume(returning: (task, error as? CourierError)) })
        }
        outcomes.append(
            Outcome(
                statusCode: failure?.response?.statusCode ?? -1, response: failure?.response,
                body: failure?.responseData ?? Data(), errorCode: failure?.errorCode, metrics: task?.metrics))
        outcomes.append(outcome(try await manager.send("GET", "gzip", serializer: serializer)))
        outcomes.append(
            outcome(
                try await manager.post("post", serializer: serializer) { form in
                    form.append(
                        Data([0xFF, 0xD8, 0xFF, 0x00]), name: "photo", fileName: "p.jpg", mimeType: "image/jpeg")
                    form.append(Data("Ada".utf8), name: "name")
                }))
        outcomes.append(
            outcome(
                try await manager.send(
                    "GET", "status/204", headers: ["Authorization": "Bearer courier-secret-token"],
                    serializer: serializer))
        )
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("har-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let download = try await manager.download(
            URLRequest(
                url: base.appendingPathComponent("bytes/4096").appending(queryItems: [.init(name: "seed", value: "7")])),
            to: destination)
        outcomes.append(outcome(download, body: try Data(contentsOf: destination)))
        return outcomes
    }

    @Test(
        "Record through a relay to httpbin, take the relay away, replay: the same fields, bytes and counts",
        arguments: FaultTransportKind.all)
    func recordThenReplay(_ kind: FaultTransportKind) async throws {
        // The session is recorded through a relay of its own to the shared httpbin, so that the replay can run
        // against the same base URL with nothing there any more, while httpbin stays up for the other tests.
        let httpbin = try await HTTPBin.shared.url()
        let relay = try await TCPRelay.start(to: try #require(httpbin.port))
        let base = relay.baseURL
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("session-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        let recorder = RecordingTransport(wrapping: kind.make(), file: file)
        let recorded = try await Self.runScript(base: base, transport: recorder)
        await recorder.shutdown()

        #expect(recorded.map(\.statusCode) == [200, 200, 404, 200, 200, 204, 200])
        #expect(recorded[1].redirects == 1 && recorded[1].exchanges == 2)
        #expect(recorded[2].errorCode == -1011 && recorded[2].exchanges == 1, "\(recorded[2])")
        #expect(recorded[3].body.range(of: Data("\"gzipped\": true".utf8)) != nil, "decoded by the transport")
        #expect(recorded.allSatisfy { $0.headers["content-type"] != nil || $0.statusCode == 204 }, "\(recorded)")
        let data = try Data(contentsOf: file)
        try HARValidation.validate(data)
        // 8 exchanges: the redirect is two.
        let archive = try HTTPArchive(contentsOf: file)
        #expect(archive.log.entries.count == 8)
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("courier-secret-token"), "the Authorization value is redacted")
        let secret = try #require(archive.log.entries.first { $0.request.url.hasSuffix("status/204") })
        #expect(secret.request.headers.first { $0.name.lowercased() == "authorization" }?.value == "REDACTED")
        let upload = try #require(archive.log.entries.first { $0.request.method == "POST" })
        #expect(upload.request.postData?.mimeType.hasPrefix("multipart/form-data; boundary=") ?? false)
        #expect(
            upload.request.postData?.data?.range(of: Data([0xFF, 0xD8, 0xFF, 0x00])) != nil, "binary kept (base64)")

        // The relay is gone and its port held refused: a live request there cannot connect.
        let refused = try await relay.stop()
        defer { withExtendedLifetime(refused) {} }
        let live = HTTPSessionManager(baseURL: base, configuration: .ephemeral, transport: kind.make())
        let unreachable = await thrownCourierError {
            _ = try await live.send("GET", "json", serializer: HTTPResponseSerializer())
        }
        #expect(unreachable?.errorCode == -1004, "\(String(describing: unreachable))")
        live.invalidate(cancelingTasks: true)

        let replay = try ReplayTransport(contentsOf: file, strict: true)
        let replayed = try await Self.runScript(base: base, transport: replay)
        #expect(replayed.count == recorded.count)
        for (index, (again, first)) in zip(replayed, recorded).enumerated() {
            #expect(again == first, "call \(index): replayed \(again), recorded \(first)")
            #expect(again.headers == first.headers, "call \(index)")
        }
        try replay.verifyAllPlayed()
        // A ninth request was never recorded: strict mode refuses it, naming what was.
        let manager = HTTPSessionManager(baseURL: base, configuration: .ephemeral, transport: replay)
        let extra = await thrownCourierError {
            _ = try await manager.send("GET", "json", serializer: HTTPResponseSerializer())
        }
        let words = String(describing: extra?.underlyingError ?? StubError(""))
        #expect(words.contains("no recorded exchange left"), "\(words)")
        manager.invalidate(cancelingTasks: true)
    }

    @Test("A HAR file as a browser exports it replays: HTTP/2, pseudo-fields, base64 content, fields of its own")
    func browserArchive() async throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF])
        let har = """
            {"log": {"version": "1.2",
              "creator": {"name": "WebInspector", "version": "537.36"},
              "pages": [{"startedDateTime": "2026-11-27T10:00:00.000Z", "id": "page_1", "title": "Example",
                         "pageTimings": {"onContentLoad": 120.5, "onLoad": 300}}],
              "entries": [
                {"_initiator": {"type": "other"}, "_priority": "VeryHigh", "_resourceType": "document",
                 "cache": {}, "connection": "443", "pageref": "page_1",
                 "request": {"method": "GET", "url": "https://www.example.test/", "httpVersion": "http/2.0",
                   "headers": [{"name": ":authority", "value": "www.example.test"}, {"name": ":method", "value": "GET"},
                               {"name": "accept", "value": "text/html"}],
                   "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
                 "response": {"status": 200, "statusText": "", "httpVersion": "http/2.0",
                   "headers": [{"name": ":status", "value": "200"}, {"name": "content-type", "value": "text/html; charset=utf-8"},
                               {"name": "content-encoding", "value": "br"}],
                   "cookies": [], "content": {"size": 27, "mimeType": "text/html", "compression": 10,
                                              "text": "<html><p>héllo</p></html>"},
                   "redirectURL": "", "headersSize": -1, "bodySize": 17, "_transferSize": 120, "_error": null},
                 "serverIPAddress": "192.0.2.1", "startedDateTime": "2026-11-27T10:00:00.010Z", "time": 85.2,
                 "timings": {"blocked": 1.1, "dns": -1, "ssl": -1, "connect": -1, "send": 0.2, "wait": 80.1,
                             "receive": 3.8, "_blocked_queueing": 0.9}},
                {"cache": {}, "request": {"method": "GET", "url": "https://www.example.test/logo.png?v=2&size=small",
                   "httpVersion": "http/2.0", "headers": [], "queryString": [{"name": "v", "value": "2"}],
                   "cookies": [], "headersSize": -1, "bodySize": 0},
                 "response": {"status": 200, "statusText": "", "httpVersion": "http/2.0",
                   "headers": [{"name": "content-type", "value": "image/png"}], "cookies": [],
                   "content": {"size": \(png.count), "mimeType": "image/png", "encoding": "base64",
                               "text": "\(png.base64EncodedString())"},
                   "redirectURL": "", "headersSize": -1, "bodySize": -1},
                 "startedDateTime": "2026-11-27T10:00:00.100Z", "time": 20,
                 "timings": {"send": 0, "wait": 15, "receive": 5}}
              ]}}
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID()).har")
        try Data(har.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let replay = try ReplayTransport(contentsOf: file, strict: true)
        let manager = HTTPSessionManager(
            baseURL: URL(string: "https://www.example.test/"), configuration: .ephemeral, transport: replay)
        let page = try await manager.send("GET", "/", serializer: HTTPResponseSerializer())
        #expect(String(decoding: page.value ?? Data(), as: UTF8.self) == "<html><p>héllo</p></html>")
        #expect(page.httpVersion == "HTTP/2")
        #expect(page.response.value(forHTTPHeaderField: "Content-Type") == "text/html; charset=utf-8")
        #expect(page.response.value(forHTTPHeaderField: ":status") == nil)
        // The query items in another order still name the same request.
        let logo = try await manager.send("GET", "logo.png?size=small&v=2", serializer: HTTPResponseSerializer())
        #expect(logo.value == png)
        try replay.verifyAllPlayed()
        manager.invalidate(cancelingTasks: true)
    }
}

/// The structure HAR 1.2 requires (http://www.softwareishard.com/blog/har-12-spec/), checked field by field on the
/// JSON itself, not through Courier's own decoder.
enum HARValidation {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func validate(_ data: Data) throws {
        let root = try JSONSerialization.jsonObject(with: data)
        let log = try object(try object(root, "root")["log"], "log")
        try string(log["version"], "log.version", equals: "1.2")
        let creator = try object(log["creator"], "log.creator")
        try string(creator["name"], "creator.name")
        try string(creator["version"], "creator.version")
        let entries = try array(log["entries"], "log.entries")
        for (index, value) in entries.enumerated() {
            let at = "entries[\(index)]"
            let entry = try object(value, at)
            let started = try string(entry["startedDateTime"], "\(at).startedDateTime")
            guard (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(started)) != nil else {
                throw Failure(description: "\(at).startedDateTime is not ISO 8601: \(started)")
            }
            try number(entry["time"], "\(at).time", atLeast: 0)
            _ = try object(entry["cache"], "\(at).cache")
            let request = try object(entry["request"], "\(at).request")
            try string(request["method"], "\(at).request.method")
            try string(request["url"], "\(at).request.url")
            try string(request["httpVersion"], "\(at).request.httpVersion")
            for key in ["cookies", "headers", "queryString"] {
                try pairs(request[key], "\(at).request.\(key)")
            }
            try number(request["headersSize"], "\(at).request.headersSize", atLeast: -1)
            try number(request["bodySize"], "\(at).request.bodySize", atLeast: -1)
            if let post = request["postData"] {
                let postData = try object(post, "\(at).request.postData")
                try string(postData["mimeType"], "\(at).request.postData.mimeType")
                guard postData["text"] is String || postData["params"] is [Any] else {
                    throw Failure(description: "\(at).request.postData has neither text nor params")
                }
            }
            let response = try object(entry["response"], "\(at).response")
            try number(response["status"], "\(at).response.status", atLeast: 0)
            try string(response["statusText"], "\(at).response.statusText")
            try string(response["httpVersion"], "\(at).response.httpVersion")
            try pairs(response["cookies"], "\(at).response.cookies")
            try pairs(response["headers"], "\(at).response.headers")
            let content = try object(response["content"], "\(at).response.content")
            try number(content["size"], "\(at).response.content.size", atLeast: 0)
            try string(content["mimeType"], "\(at).response.content.mimeType")
            try string(response["redirectURL"], "\(at).response.redirectURL")
            try number(response["headersSize"], "\(at).response.headersSize", atLeast: -1)
            try number(response["bodySize"], "\(at).response.bodySize", atLeast: -1)
            let timings = try object(entry["timings"], "\(at).timings")
            for key in ["send", "wait", "receive"] { try number(timings[key], "\(at).timings.\(key)", atLeast: 0) }
            for key in ["blocked", "dns", "connect", "ssl"] where timings[key] != nil {
                try number(timings[key], "\(at).timings.\(key)", atLeast: -1)
            }
        }
    }

    private static func object(_ value: Any?, _ at: String) throws -> [String: Any] {
        guard let object = value as? [String: Any] else { throw Failure(description: "\(at) is not an object") }
        return object
    }

    private static func array(_ value: Any?, _ at: String) throws -> [Any] {
        guard let array = value as? [Any] else { throw Failure(description: "\(at) is not an array") }
        return array
    }

    @discardableResult
    private static func string(_ value: Any?, _ at: String, equals wanted: String? = nil) throws -> String {
        guard let text = value as? String else { throw Failure(description: "\(at) is not a string") }
        if let wanted, text != wanted { throw Failure(description: "\(at) is \(text), not \(wanted)") }
        return text
    }

    private static func number(_ value: Any?, _ at: String, atLeast minimum: Double) throws {
        guard let number = value as? NSNumber, !(value is Bool && !(value is Int)) else {
            throw Failure(description: "\(at) is not a number")
        }
        guard number.doubleValue >= minimum else { throw Failure(description: "\(at) is below \(minimum)") }
    }

    /// A list of objects each with a string `name` and `value`.
    private static func pairs(_ value: Any?, _ at: String) throws {
        for (index, item) in try array(value, at).enumerated() {
            let pair = try object(item, "\(at)[\(index)]")
            try string(pair["name"], "\(at)[\(index)].name")
            try string(pair["value"], "\(at)[\(index)].value")
        }
    }
}

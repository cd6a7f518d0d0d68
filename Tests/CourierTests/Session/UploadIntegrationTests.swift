import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Multipart forms and uploads end to end against a real httpbin, on every transport.
@Suite(.timeLimit(.minutes(3)))
struct UploadIntegrationTests {
    static let transports = TestTransports.names

    func client(_ transport: String) async throws -> HTTPSessionManager {
        let base = try await HTTPBin.shared.url()
        let manager = HTTPSessionManager(
            baseURL: base, configuration: .ephemeral, transport: TestTransports.make(transport))
        manager.completionQueue = DispatchQueue(label: "test.completion")
        return manager
    }

    /// ASCII text, so httpbin echoes a file part as-is rather than as a base64 data URL.
    static func text(count: Int, seed: UInt64) -> Data {
        TestBytes.text(count: count, seed: seed)
    }

    static func scratchFile(_ name: String, contents: Data) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url)
        return url
    }

    static func remove(_ file: URL) {
        try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
    }

    // MARK: Multipart

    @Test(arguments: transports)
    func httpbinEchoesFilesAndFieldsWithProgressEndingAtOne(transport: String) async throws {
        let client = try await client(transport)
        let contents = Self.text(count: 20_000, seed: 11)
        let file = try Self.scratchFile("twenty.txt", contents: contents)
        defer { Self.remove(file) }
        let progress = Locked([TaskProgress]())
        let response = try await client.post(
            "post", parameters: ["名前": "値", "tags": ["a"], "nested": ["k": "v"]],
            progress: { value in progress.withLock { $0.append(value) } }
        ) { form in
            try form.append(fileURL: file, name: "document")
            form.append(Data("inline".utf8), name: "memo", fileName: "memo.txt", mimeType: "text/plain")
            form.append(Data("ü".utf8), name: "feld")
        }
        #expect(response.statusCode == 200)
        let echo = try #require(response.value)
        #expect(echo["files"]?["document"]?.stringValue == String(decoding: contents, as: UTF8.self))
        #expect(echo["files"]?["memo"]?.stringValue == "inline")
        #expect(echo["form"]?["名前"]?.stringValue == "値")
        #expect(echo["form"]?["tags[]"]?.stringValue == "a")
        #expect(echo["form"]?["nested[k]"]?.stringValue == "v")
        #expect(echo["form"]?["feld"]?.stringValue == "ü")
        let contentType = echo["headers"]?["Content-Type"]?.stringValue ?? ""
        #expect(contentType.hasPrefix("multipart/form-data; boundary=Boundary+"))
        let sent = try #require(Int64(echo["headers"]?["Content-Length"]?.stringValue ?? ""))
        #expect(progress.value.last?.fractionCompleted == 1.0)
        #expect(progress.value.last?.completed == sent)
        #expect(progress.value.map(\.completed) == progress.value.map(\.completed).sorted())
    }

    @Test(arguments: transports)
    func callbackPostSucceedsAndReportsBuildErrorsWithoutATask(transport: String) async throws {
        let client = try await client(transport)
        let done = Outcome()
        let object = Locked<JSON?>(nil)
        let task = client.post(
            "post", parameters: ["k": "v"],
            constructingBody: { form in form.append(Data("1".utf8), name: "one") },
            success: { _, value in
                object.withLock { $0 = value as? JSON }
                done.fulfill(nil)
            },
            failure: { _, error in done.fulfill(error) })
        #expect(task != nil)
        #expect(try await done.value() == nil)
        #expect(object.value?["form"]?["one"]?.stringValue == "1")
        #expect(object.value?["form"]?["k"]?.stringValue == "v")

        let failed = Outcome()
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
        let hadTask = Locked(true)
        let none = client.post(
            "post", constructingBody: { form in try form.append(fileURL: missing, name: "f") },
            failure: { task, error in
                hadTask.withLock { $0 = task != nil }
                failed.fulfill(error)
            })
        #expect(none == nil)
        let error = try #require(try await failed.value() as? CourierError)
        #expect(error.errorCode == -1000)
        #expect(error.errorDescription == "File URL not reachable.")
        #expect(hadTask.value == false)
    }

    @Test(arguments: transports)
    func trailingClosureFormsReadNaturally(transport: String) async throws {
        let client = try await client(transport)
        let json = try await client.post("post") { form in
            form.append(Data("t".utf8), name: "t")
        }
        #expect(json.value?["form"]?["t"]?.stringValue == "t")
        let decoded = try await client.post("post", parameters: ["k": "v"], as: EchoForm.self) { form in
            form.append(Data("t".utf8), name: "t")
        }
        #expect(decoded.value.form == ["k": "v", "t": "t"])
    }

    struct EchoForm: Decodable, Sendable {
        var form: [String: String]
    }

    @Test(arguments: transports)
    func a307RedirectSendsTheFormAgain(transport: String) async throws {
        let client = try await client(transport)
        let contents = Self.text(count: 70_000, seed: 5)
        let file = try Self.scratchFile("again.txt", contents: contents)
        defer { Self.remove(file) }
        // httpbin's own redirect-to answers before reading a large body, and the reset that follows can lose it.
        let redirect = try await RedirectServer.start(
            status: 307, location: try await HTTPBin.shared.url().appendingPathComponent("post"))
        defer { Task { try await redirect.stop() } }
        let response = try await client.post(redirect.url.absoluteString, parameters: ["k": "v"]) { form in
            try form.append(fileURL: file, name: "f")
        }
        #expect(redirect.requests.map(\.method) == ["POST"])
        #expect(redirect.requests.first?.bodyBytes ?? 0 > contents.count)
        #expect(response.request.url?.path == "/post")
        #expect(response.value?["files"]?["f"]?.stringValue == String(decoding: contents, as: UTF8.self))
        #expect(response.value?["form"]?["k"]?.stringValue == "v")
    }

    @Test(arguments: transports)
    func aOneShotStreamIsNotResentOnRedirect(transport: String) async throws {
        let client = try await client(transport)
        let chunks = [Data("abc".utf8)].async
        let response = try await client.post(
            "redirect-to?url=/post&status_code=307", serializer: HTTPResponseSerializer(acceptableStatusCodes: nil)
        ) { form in
            form.append(chunks, length: 3, name: "s", fileName: "s.txt", mimeType: "text/plain")
        }
        // The body could not be produced twice, so the redirect is handed back instead of followed.
        #expect(response.statusCode == 307)
    }

    @Test(arguments: transports)
    func aFileChangedAfterBuildingFailsTheUploadClearly(transport: String) async throws {
        let client = try await client(transport)
        let file = try Self.scratchFile("changing.txt", contents: Self.text(count: 1_000, seed: 1))
        defer { Self.remove(file) }
        let multipart = try client.makeMultipartRequest(urlString: "post") { form in
            try form.append(fileURL: file, name: "f")
        }
        try Self.text(count: 1_500, seed: 1).write(to: file)
        let done = Outcome()
        client.uploadTask(with: multipart) { _, _, error in done.fulfill(error) }.resume()
        let error = try #require(try await done.value() as? CourierError)
        guard case .fileOperationFailed(let reason, _, let context) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(reason.contains("changed size during the upload: expected 1000 bytes"))
        #expect(context.request?.url?.path == "/post")
    }

    @Test(arguments: transports)
    func aFileGrowingWhileTheFormIsSentFailsTheUpload(transport: String) async throws {
        let client = try await client(transport)
        let file = try Self.scratchFile("growing.txt", contents: Self.text(count: 200_000, seed: 2))
        defer { Self.remove(file) }
        // The stream part before the file grows it once the body is already going out: deterministic, no timing.
        let multipart = try client.makeMultipartRequest(urlString: "post") { form in
            form.append(Data(repeating: 65, count: 100_000), name: "before")
            form.append(length: 3, name: "hook", fileName: "hook", mimeType: "text/plain") {
                AsyncThrowingStream<Data, any Error> { continuation in
                    do {
                        let handle = try FileHandle(forWritingTo: file)
                        try handle.seekToEnd()
                        try handle.write(contentsOf: Data("more".utf8))
                        try handle.close()
                        continuation.yield(Data("abc".utf8))
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
            }
            try form.append(fileURL: file, name: "f")
        }
        let done = Outcome()
        let progress = Locked([TaskProgress]())
        client.uploadTask(with: multipart, progress: { value in progress.withLock { $0.append(value) } }) {
            _, _, error in done.fulfill(error)
        }.resume()
        let error = try #require(try await done.value() as? CourierError)
        guard case .fileOperationFailed(let reason, let underlying, _) = error else {
            Issue.record("unexpected \(error)")
            return
        }
        #expect(reason.contains("changed size during the upload: expected 200000 bytes"))
        #expect(underlying is FileChangedError)
        #expect(progress.value.last?.fractionCompleted ?? 0 < 1)
    }

    @Test(arguments: transports)
    func aBodyWrittenToAFileUploadsAsAPlainFile(transport: String) async throws {
        let client = try await client(transport)
        let file = try Self.scratchFile("plain.txt", contents: Data("plain".utf8))
        defer { Self.remove(file) }
        let multipart = try client.makeMultipartRequest(urlString: "post", parameters: ["k": "v"]) { form in
            try form.append(fileURL: file, name: "f")
        }
        let bodyFile = file.deletingLastPathComponent().appendingPathComponent("body")
        let request = try await multipart.writingBody(to: bodyFile)
        let done = Outcome()
        let object = Locked<JSON?>(nil)
        client.uploadTask(with: request, fromFile: bodyFile) { _, value, error in
            object.withLock { $0 = value as? JSON }
            done.fulfill(error)
        }.resume()
        #expect(try await done.value() == nil)
        #expect(object.value?["files"]?["f"]?.stringValue == "plain")
        #expect(object.value?["form"]?["k"]?.stringValue == "v")
    }

    // MARK: Plain uploads

    @Test(arguments: transports)
    func uploadsFromDataAFileAndStreams(transport: String) async throws {
        let client = try await client(transport)
        let url = try await HTTPBin.url("anything")
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        let payload = Self.text(count: 100_000, seed: 9)
        let file = try Self.scratchFile("payload.txt", contents: payload)
        defer { Self.remove(file) }
        let slices = stride(from: 0, to: payload.count, by: 30_000).map {
            payload.subdata(in: $0..<min($0 + 30_000, payload.count))
        }
        let bodies: [(String, HTTPRequestBody)] = [
            ("data", .data(payload)),
            ("file", try .file(file)),
            ("known-length stream", .stream(slices.async, length: Int64(payload.count))),
            ("unknown-length stream", .stream(slices.async, length: nil)),
        ]
        for (label, body) in bodies {
            let progress = Locked([TaskProgress]())
            let response = try await client.upload(
                request, body: body, progress: { value in progress.withLock { $0.append(value) } },
                serializer: JSONResponseSerializer())
            let echo = try #require(response.value, "\(label)")
            #expect(echo["data"]?.stringValue == String(decoding: payload, as: UTF8.self), "\(label)")
            #expect(echo["method"]?.stringValue == "PUT")
            let headers = echo["headers"]
            if body.length == nil, transport == "NIOTransport" {
                #expect(headers?["Transfer-Encoding"]?.stringValue == "chunked", "\(label)")
                #expect(headers?["Content-Length"] == nil, "\(label)")
            } else {
                // URLSession on Linux can only send a stream of unknown length by spooling it to a file first, so
                // it goes out with a Content-Length (see URLSessionTransport).
                #expect(headers?["Content-Length"]?.stringValue == "100000", "\(label)")
            }
            #expect(progress.value.last?.completed == 100_000, "\(label)")
            if body.length != nil {
                #expect(progress.value.last?.fractionCompleted == 1.0, "\(label)")
            }
        }
    }
}

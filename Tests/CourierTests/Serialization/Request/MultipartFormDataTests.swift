import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct MultipartFormDataTests {
    static let boundary = "Boundary+DEADBEEFCAFEBABE"

    /// A fresh directory for one test's files, removed by the caller.
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    static func multipartError(_ error: any Error) -> (code: Int, reason: String)? {
        guard let error = error as? CourierError, case .multipartEncodingFailed(let reason, _, _) = error else {
            return nil
        }
        return (error.errorCode, reason)
    }

    // MARK: Layout

    @Test func theIssueExampleIsByteExact() async throws {
        var form = MultipartFormData(boundary: Self.boundary)
        form.append(Data("x".utf8), name: "field")
        let expected =
            "--Boundary+DEADBEEFCAFEBABE\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nx\r\n"
            + "--Boundary+DEADBEEFCAFEBABE--\r\n"
        #expect(form.contentLength == 111)
        #expect(Self.text(try await form.encode()) == expected)

        let multipart = try HTTPRequestSerializer().multipartRequest(
            method: "POST", urlString: "https://example.com/upload", boundary: Self.boundary
        ) { form in
            form.append(Data("x".utf8), name: "field")
        }
        #expect(multipart.urlRequest.value(forHTTPHeaderField: "Content-Length") == "111")
        #expect(
            multipart.urlRequest.value(forHTTPHeaderField: "Content-Type")
                == "multipart/form-data; boundary=Boundary+DEADBEEFCAFEBABE")
        #expect(multipart.urlRequest.httpBody == nil)
        #expect(multipart.body.length == 111)
        #expect(multipart.body.isReplayable)
        #expect(multipart.body.data != nil, "a small form in memory is sent as one buffer")
        var body = Data()
        for try await chunk in try multipart.body.makeChunks() { body.append(chunk) }
        #expect(Self.text(body) == expected)
    }

    @Test func severalPartsInCallOrder() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("notes.txt")
        try Data("file body".utf8).write(to: file)

        var form = MultipartFormData(boundary: "B")
        form.append(Data("1".utf8), name: "a")
        form.append(Data("PNG".utf8), name: "pic", fileName: "p.png", mimeType: "image/png")
        try form.append(fileURL: file, name: "doc")
        form.append(headers: ["X-One": "1", "Content-Disposition": "form-data; name=\"raw\""], body: Data("r".utf8))
        let expected =
            "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1"
            + "\r\n--B\r\nContent-Disposition: form-data; name=\"pic\"; filename=\"p.png\"\r\n"
            + "Content-Type: image/png\r\n\r\nPNG"
            + "\r\n--B\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"notes.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nfile body"
            + "\r\n--B\r\nX-One: 1\r\nContent-Disposition: form-data; name=\"raw\"\r\n\r\nr"
            + "\r\n--B--\r\n"
        let encoded = try await form.encode()
        #expect(Self.text(encoded) == expected)
        #expect(form.contentLength == Int64(encoded.count))
        #expect(form.count == 4)
    }

    @Test func namesAreWrittenAsGivenExceptWhatWouldBreakTheHeader() async throws {
        var form = MultipartFormData(boundary: "B")
        form.append(Data("1".utf8), name: "user[tags][] ü")
        form.append(Data("2".utf8), name: "a\"b\r\nX-Injected: 1", fileName: "f\".txt", mimeType: "text/plain")
        let text = Self.text(try await form.encode())
        #expect(text.contains("Content-Disposition: form-data; name=\"user[tags][] ü\"\r\n"))
        #expect(text.contains("name=\"a%22b%0D%0AX-Injected: 1\"; filename=\"f%22.txt\"\r\n"))
        #expect(!text.contains("\r\nX-Injected"))
        #expect(Int64(text.utf8.count) == form.contentLength)
    }

    @Test func randomBoundariesAreAFNetworkingShaped() {
        let first = MultipartFormData.randomBoundary()
        let second = MultipartFormData.randomBoundary()
        for boundary in [first, second] {
            #expect(boundary.count == 25)
            #expect(boundary.hasPrefix("Boundary+"))
            #expect(boundary.dropFirst(9).allSatisfy { "0123456789ABCDEF".contains($0) }, "\(boundary)")
        }
        #expect(first != second)
        var one = SeededGenerator(seed: 7)
        var two = SeededGenerator(seed: 7)
        #expect(
            MultipartFormData.randomBoundary(using: &one) == MultipartFormData.randomBoundary(using: &two))
        #expect(MultipartFormData().boundary != MultipartFormData().boundary)
    }

    @Test func anEmptyFormIsEmpty() async throws {
        let form = MultipartFormData(boundary: "B")
        #expect(form.contentLength == 0)
        #expect(try await form.encode().isEmpty)
    }

    // MARK: Files

    @Test func filesAreMeasuredNowAndReadWhenSent() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("data.bin")
        try Data("aaaa".utf8).write(to: file)
        var form = MultipartFormData(boundary: "B")
        try form.append(fileURL: file, name: "f")
        let head =
            "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"data.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        #expect(form.contentLength == Int64(head.utf8.count + 4 + "\r\n--B--\r\n".utf8.count))
        let body = form.makeBody()
        #expect(body.length == form.contentLength)
        #expect(body.data == nil)

        // Same size, new bytes: what is sent is what the file holds when it is read, not when it was appended.
        try Data("bbbb".utf8).write(to: file)
        #expect(Self.text(try await form.encode()) == head + "bbbb\r\n--B--\r\n")
    }

    @Test(arguments: ["grow", "shrink", "delete"])
    func aFileChangedAfterAppendingFailsBeforeTheFirstByte(change: String) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("data.bin")
        try Data(repeating: 1, count: 100).write(to: file)
        var form = MultipartFormData(boundary: "B")
        form.append(Data("before".utf8), name: "first")
        try form.append(fileURL: file, name: "f")
        switch change {
        case "grow": try Data(repeating: 1, count: 150).write(to: file)
        case "shrink": try Data(repeating: 1, count: 50).write(to: file)
        default: try FileManager.default.removeItem(at: file)
        }
        var iterator = try form.makeBody().makeChunks().makeAsyncIterator()
        do {
            _ = try await iterator.next()
            Issue.record("the first chunk should fail")
        } catch let error as CourierError {
            if change == "delete" {
                #expect(Self.multipartError(error)?.reason == "File URL not reachable.")
            } else {
                guard case .fileOperationFailed(let reason, let underlying, _) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(reason.contains("changed size during the upload"))
                #expect(underlying is FileChangedError)
            }
        }
    }

    @Test(arguments: [true, false])
    func aFileChangingWhileSentFailsTheBody(grows: Bool) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("data.bin")
        try Data(repeating: 1, count: 10_000).write(to: file)
        var form = MultipartFormData(boundary: "B")
        form.chunkSize = 1_000
        try form.append(fileURL: file, name: "f")
        var iterator = try form.makeBody().makeChunks().makeAsyncIterator()
        var received = 0
        while received < 2_000, let chunk = try await iterator.next() { received += chunk.count }
        if grows {
            let handle = try FileHandle(forWritingTo: file)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(repeating: 2, count: 10))
            try handle.close()
        } else {
            let handle = try FileHandle(forWritingTo: file)
            try handle.truncate(atOffset: 5_000)
            try handle.close()
        }
        do {
            while try await iterator.next() != nil {}
            Issue.record("the body should fail")
        } catch let error as CourierError {
            #expect(error.errorCode == -3000)
            #expect(error.errorDescription?.contains("changed size during the upload") == true)
        }
    }

    @Test func aLargeFileIsStreamedInBoundedChunks() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("large.bin")
        let contents = TestBytes.random(count: 3_000_000, seed: 3)
        try contents.write(to: file)
        var form = MultipartFormData(boundary: "B")
        form.chunkSize = 64 * 1024
        form.append(Data(repeating: 65, count: 200_000), name: "big-field")
        try form.append(fileURL: file, name: "f")
        let body = form.makeBody()
        var largest = 0
        var total: Int64 = 0
        var fileBytes = Data()
        for try await chunk in try body.makeChunks() {
            largest = max(largest, chunk.count)
            total += Int64(chunk.count)
            fileBytes.append(chunk)
        }
        #expect(largest <= 64 * 1024)
        #expect(total == form.contentLength)
        #expect(fileBytes.range(of: contents) != nil)
    }

    @Test func aLargeInMemoryPartIsStreamedFromItsOwnBuffer() async throws {
        var form = MultipartFormData(boundary: "B")
        form.chunkSize = 100_000
        let big = Data(repeating: 7, count: 2_000_000)
        form.append(Data("small".utf8), name: "s")
        form.append(big, name: "big", fileName: "big.bin", mimeType: "application/octet-stream")
        let body = form.makeBody()
        #expect(body.data == nil)
        var encoded = Data()
        var largest = 0
        for try await chunk in try body.makeChunks() {
            largest = max(largest, chunk.count)
            encoded.append(chunk)
        }
        #expect(largest <= 100_000)
        let head =
            "--B\r\nContent-Disposition: form-data; name=\"s\"\r\n\r\nsmall\r\n--B\r\n"
            + "Content-Disposition: form-data; name=\"big\"; filename=\"big.bin\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        #expect(encoded == Data(head.utf8) + big + Data("\r\n--B--\r\n".utf8))
        #expect(Int64(encoded.count) == form.contentLength)
    }

    // MARK: Errors

    @Test func fileErrorsAreAFNetworkings() throws {
        var form = MultipartFormData(boundary: "B")
        let remote = try #require(URL(string: "https://example.com/a.png"))
        #expect {
            try form.append(fileURL: remote, name: "f")
        } throws: { error in
            Self.multipartError(error)?.code == -1000
                && Self.multipartError(error)?.reason == "Expected URL to be a file URL"
                && (error as? CourierError)?.errorDescription == "Expected URL to be a file URL"
        }
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).png")
        #expect {
            try form.append(fileURL: missing, name: "f", fileName: "x", mimeType: "image/png")
        } throws: { error in
            Self.multipartError(error)?.code == -1000 && Self.multipartError(error)?.reason == "File URL not reachable."
        }
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect {
            try form.append(fileURL: directory, name: "f")
        } throws: { error in
            Self.multipartError(error)?.reason == "File URL not reachable."
        }
        #expect(form.isEmpty)
    }

    @Test func getAndHeadAreRefused() throws {
        let serializer = HTTPRequestSerializer()
        for method in ["GET", "HEAD", "get"] {
            #expect {
                _ = try serializer.multipartRequest(method: method, urlString: "https://example.com/") { form in
                    form.append(Data("x".utf8), name: "x")
                }
            } throws: { error in
                Self.multipartError(error)?.code == -1000
            }
        }
        #expect(
            throws: CourierError.self,
            performing: {
                _ = try serializer.multipartRequest(method: "POST", urlString: "not a url")
            })
    }

    @Test func constructingBodyErrorsAreRethrown() {
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            _ = try HTTPRequestSerializer().multipartRequest(method: "POST", urlString: "https://example.com/") { _ in
                throw Stop()
            }
        }
    }

    // MARK: MIME types

    @Test func mimeTypesMatchApplesForCommonExtensions() async throws {
        #expect(MIMEType.mimeType(forPathExtension: "cer") == "application/x-x509-ca-cert")
        #expect(MIMEType.mimeType(forPathExtension: "png") == "image/png")
        #expect(MIMEType.mimeType(forPathExtension: "PNG") == "image/png")
        #expect(MIMEType.mimeType(forPathExtension: "json") == "application/json")
        #expect(MIMEType.mimeType(forPathExtension: "jpg") == "image/jpeg")
        #expect(MIMEType.mimeType(forPathExtension: "txt") == "text/plain")
        #expect(MIMEType.mimeType(forPathExtension: "pdf") == "application/pdf")
        #expect(MIMEType.mimeType(forPathExtension: "xyz-unknown") == "application/octet-stream")
        #expect(MIMEType.mimeType(forPathExtension: "") == "application/octet-stream")

        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("root.cer")
        try Data([0x30, 0x82]).write(to: certificate)
        var form = MultipartFormData(boundary: "B")
        try form.append(fileURL: certificate, name: "cert")
        let encoded = Self.text(try await form.encode())
        #expect(
            encoded.contains("name=\"cert\"; filename=\"root.cer\"\r\nContent-Type: application/x-x509-ca-cert\r\n"))
    }

    // MARK: Parameters

    @Test func parametersComeFirstFlattenedWithRawNames() async throws {
        let parameters: Parameter = [
            "arr": ["a", "b"], "d": ["x": 1], "n": nil, "raw": .data(Data([0xFF, 0x00])), "t": true,
            "名前": "値",
        ]
        let multipart = try HTTPRequestSerializer().multipartRequest(
            method: "POST", urlString: "https://example.com/", parameters: parameters, boundary: "B"
        ) { form in
            form.append(Data("last".utf8), name: "z")
        }
        var body = Data()
        for try await chunk in try multipart.body.makeChunks() { body.append(chunk) }
        func field(_ name: String, _ value: Data, first: Bool = false) -> Data {
            Data(((first ? "" : "\r\n") + "--B\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n").utf8)
                + value
        }
        var expected = field("arr[]", Data("a".utf8), first: true)
        expected += field("arr[]", Data("b".utf8))
        expected += field("d[x]", Data("1".utf8))
        expected += field("n", Data())
        expected += field("raw", Data([0xFF, 0x00]))
        expected += field("t", Data("1".utf8))
        expected += field("名前", Data("値".utf8))
        expected += field("z", Data("last".utf8))
        expected += Data("\r\n--B--\r\n".utf8)
        #expect(body == expected)
        #expect(multipart.urlRequest.value(forHTTPHeaderField: "Content-Length") == String(expected.count))
    }

    @Test func aFormWithNoPartsLeavesTheRequestAsTheSerializerMadeIt() throws {
        let multipart = try HTTPRequestSerializer().multipartRequest(method: "POST", urlString: "https://example.com/")
        #expect(
            multipart.urlRequest.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        #expect(multipart.body.length == 0)
    }

    @Test func otherSerializersKeepTheirHeadersButSendAForm() throws {
        var json = JSONRequestSerializer()
        json.setValue("yes", forHTTPHeaderField: "X-Default")
        let multipart = try json.multipartRequest(
            method: "PUT", urlString: "https://example.com/", parameters: ["k": "v"], boundary: "B")
        #expect(multipart.urlRequest.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=B")
        #expect(multipart.urlRequest.value(forHTTPHeaderField: "X-Default") == "yes")
        #expect(multipart.urlRequest.httpMethod == "PUT")
        #expect(multipart.body.data.map(Self.text)?.contains("name=\"k\"\r\n\r\nv") == true)
    }

    // MARK: Streams

    @Test func aStreamPartIsSentOnceWithItsDeclaredLength() async throws {
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("abc".utf8))
            continuation.yield(Data("defg".utf8))
            continuation.finish()
        }
        var form = MultipartFormData(boundary: "B")
        form.append(chunks, length: 7, name: "s", fileName: "s.txt", mimeType: "text/plain")
        #expect(!form.isReplayable)
        let body = form.makeBody()
        #expect(!body.isReplayable)
        #expect(body.length == form.contentLength)
        var data = Data()
        for try await chunk in try body.makeChunks() { data.append(chunk) }
        #expect(Self.text(data).contains("Content-Type: text/plain\r\n\r\nabcdefg\r\n--B--\r\n"))
        #expect(Int64(data.count) == form.contentLength)
        await #expect(throws: CourierError.self) {
            for try await _ in try body.makeChunks() {}
        }
    }

    @Test func aStreamPartFromAFactoryIsReplayable() async throws {
        var form = MultipartFormData(boundary: "B")
        form.append(length: 6, name: "s", fileName: "s.bin", mimeType: "application/octet-stream") {
            [Data([1, 2, 3]), Data([4, 5, 6])].async
        }
        #expect(form.isReplayable)
        let first = try await form.encode()
        let second = try await form.encode()
        #expect(first == second)
        #expect(first.range(of: Data([1, 2, 3, 4, 5, 6])) != nil)
    }

    @Test(arguments: [3, 9])
    func aStreamOfTheWrongLengthFails(actual: Int) async throws {
        var form = MultipartFormData(boundary: "B")
        form.append(length: 6, name: "s", fileName: "s.bin", mimeType: "application/octet-stream") {
            [Data(repeating: 1, count: actual)].async
        }
        await #expect {
            _ = try await form.encode()
        } throws: { error in
            Self.multipartError(error)?.reason.contains("declared as 6 bytes") == true
        }
    }

    @Test func aStreamOfSingleBytesIsBatched() async throws {
        var form = MultipartFormData(boundary: "B")
        form.chunkSize = 4
        let bytes = Array(repeating: UInt8(ascii: "q"), count: 10).async
        form.append(bytes, length: 10, name: "b", fileName: "b", mimeType: "text/plain")
        var sizes: [Int] = []
        var data = Data()
        for try await chunk in try form.makeBody().makeChunks() {
            sizes.append(chunk.count)
            data.append(chunk)
        }
        #expect(Self.text(data).contains("\r\n\r\nqqqqqqqqqq\r\n--B--"))
        #expect(sizes.allSatisfy { $0 <= 4 })
    }

    @Test func aRequestBodyPartNeedsALength() async throws {
        var form = MultipartFormData(boundary: "B")
        #expect(throws: CourierError.self) {
            try form.append(headers: ["X": "1"], body: .stream([Data("a".utf8)].async, length: nil))
        }
        try form.append(headers: ["X": "1"], body: .stream([Data("ab".utf8)].async, length: 2))
        #expect(Self.text(try await form.encode()) == "--B\r\nX: 1\r\n\r\nab\r\n--B--\r\n")
        #expect(!form.isReplayable)
        await #expect {
            _ = try await form.encode()
        } throws: { error in
            Self.multipartError(error)?.reason.contains("can be sent only once") == true
        }
    }

    // MARK: Throttling and writing to a file

    @Test func throttlingCutsPacketsAndPausesAfterEach() async throws {
        var form = MultipartFormData(boundary: "B")
        form.append(Data(repeating: 1, count: 4_000), name: "f")
        form.throttle(packetSize: 1_000, delay: 0.01)
        #expect(form.packetSize == 1_000)
        #expect(form.delay == 0.01)
        let body = form.makeBody()
        #expect(body.data == nil)
        let clock = ContinuousClock()
        let start = clock.now
        var sizes: [Int] = []
        for try await chunk in try body.makeChunks() { sizes.append(chunk.count) }
        // A pause never ends early, so the lower bound holds on any machine.
        #expect(clock.now - start >= .milliseconds(10 * sizes.count))
        #expect(sizes.allSatisfy { $0 <= 1_000 })
        #expect(Int64(sizes.reduce(0, +)) == form.contentLength)

        var defaults = MultipartFormData()
        defaults.throttle()
        #expect(defaults.packetSize == 16_384)
        #expect(defaults.delay == 0.2)
    }

    @Test func theBodyCanBeWrittenToAFile() async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("in.json")
        try Data("{\"a\":1}".utf8).write(to: file)
        let multipart = try HTTPRequestSerializer().multipartRequest(
            method: "POST", urlString: "https://example.com/", parameters: ["k": "v"], boundary: "B"
        ) { form in
            try form.append(fileURL: file, name: "json")
        }
        let output = directory.appendingPathComponent("body.multipart")
        try Data("old contents that are longer than nothing".utf8).write(to: output)
        let request = try await multipart.writingBody(to: output)
        let written = try Data(contentsOf: output)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(written.count))
        #expect(Self.text(written).contains("filename=\"in.json\"\r\nContent-Type: application/json\r\n\r\n{\"a\":1}"))
        #expect(Self.text(written).hasSuffix("\r\n--B--\r\n"))

        // A failure leaves no partial file behind.
        try FileManager.default.removeItem(at: file)
        let failed = directory.appendingPathComponent("failed.multipart")
        await #expect(throws: CourierError.self) { _ = try await multipart.writingBody(to: failed) }
        #expect(!FileManager.default.fileExists(atPath: failed.path))
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence.
    var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}

import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// When a download's response is validated against the file already at its destination (issue 33): the `async`
/// download validates before it moves, so an error page never replaces a good file; the callback API moves the file
/// and hands the error with its URL, as AFNetworking's does. Each test on both transports, against a real server
/// answering 404 with a body.
@Suite(.timeLimit(.minutes(1)))
struct DownloadValidationTests {
    /// A 404 whose body is unique to the test, so a temporary file holding it can be told from other tests' files.
    static func errorPage() -> String { "<h1>Not Found</h1> \(UUID().uuidString)" }

    static func prefilledDestination() throws -> (url: URL, bytes: Data) {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-validation-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appendingPathComponent("report.csv")
        let bytes = Data("the good file, downloaded yesterday \(UUID().uuidString)\n".utf8)
        try bytes.write(to: destination)
        return (destination, bytes)
    }

    /// The files in Courier's temporary directory that hold exactly `body`: the download's own temporary file, if
    /// it was left behind.
    static func temporaryFiles(holding body: String) -> [URL] {
        guard let directory = TemporaryFiles.directory,
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        let wanted = Data(body.utf8)
        return names.map { directory.appendingPathComponent($0) }.filter { file in
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue
            return size == wanted.count && (try? Data(contentsOf: file)) == wanted
        }
    }

    @Test(arguments: TestTransports.names)
    func anAsyncDownloadAnswered404LeavesTheDestinationAndRemovesTheTemporaryFile(transport: String) async throws {
        let page = Self.errorPage()
        let server = try await ScriptedServer.start([
            .init(status: 404, headers: [("Content-Type", "text/html")], body: page)
        ])
        let kind = TestTransports.make(transport)
        let manager = SessionManager(configuration: .ephemeral, transport: kind)
        let (destination, good) = try Self.prefilledDestination()
        let error = await thrownCourierError {
            try await manager.download(URLRequest(url: server.url("report.csv")), to: destination)
        }
        #expect(error?.errorCode == -1011)
        #expect(error?.response?.statusCode == 404)
        // Byte for byte the file that was there: not the error page, not deleted by `.removePreviousFile`.
        #expect(try Data(contentsOf: destination) == good)
        #expect(Self.temporaryFiles(holding: page).isEmpty)
        #expect(server.received.count == 1)
        manager.invalidate(cancelingTasks: true)
        await kind.shutdown()
        try await server.stop()
        try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
    }

    /// The callback API keeps AFNetworking's behaviour: the file is moved, and the completion handler gets both the
    /// unacceptable-status error and the file's URL.
    @Test(arguments: TestTransports.names)
    func aCallbackDownloadAnswered404MovesTheFileAndReportsTheError(transport: String) async throws {
        let page = Self.errorPage()
        let server = try await ScriptedServer.start([
            .init(status: 404, headers: [("Content-Type", "text/html")], body: page)
        ])
        let kind = TestTransports.make(transport)
        let manager = SessionManager(configuration: .ephemeral, transport: kind)
        manager.completionQueue = DispatchQueue(label: "test.validation.completion")
        let (destination, _) = try Self.prefilledDestination()
        let finished = Locked<(url: URL?, error: (any Error)?)?>(nil)
        let outcome = Outcome()
        manager.downloadTask(
            with: URLRequest(url: server.url("report.csv")), destination: { _, _ in destination },
            options: [.removePreviousFile]
        ) { _, object, error in
            finished.withLock { $0 = (object as? URL, error) }
            outcome.fulfill(error)
        }.resume()
        _ = try? await outcome.value()
        let result = try #require(finished.value)
        #expect((result.error as? CourierError)?.errorCode == -1011)
        #expect(result.url == destination)
        #expect(try Data(contentsOf: destination) == Data(page.utf8))
        manager.invalidate(cancelingTasks: true)
        await kind.shutdown()
        try await server.stop()
        try? FileManager.default.removeItem(at: destination.deletingLastPathComponent())
    }
}

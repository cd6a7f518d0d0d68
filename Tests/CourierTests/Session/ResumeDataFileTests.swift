import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Resume data whose partial file cannot be continued: the download starts over without asking for a range, so a
/// server that honours ranges cannot leave a file holding only the resource's tail.
@Suite struct ResumeDataFileTests {
    enum PartialFile: String, CaseIterable, CustomTestStringConvertible {
        case missing, shorterThanItSays, notCouriers
        var testDescription: String { rawValue }
    }

    @Test(arguments: TestTransports.names, PartialFile.allCases)
    func anUnusablePartialFileStartsOverWithoutARange(transport: String, partial: PartialFile) async throws {
        let body = TestBytes.periodic(count: 100_000) { UInt8(truncatingIfNeeded: $0 &* 7) }
        let server = try await RangeServer.start(body)
        defer { Task { try await server.stop() } }
        let file: URL
        switch partial {
        case .missing:
            file = try TemporaryFiles.makeFile(prefix: "Courier-test").url
            try FileManager.default.removeItem(at: file)
        case .shorterThanItSays:
            let (url, handle) = try TemporaryFiles.makeFile(prefix: "Courier-test")
            try handle.write(contentsOf: body.prefix(1000))
            try handle.close()
            file = url
        case .notCouriers:
            file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-foreign-\(UUID())")
            try body.prefix(40_000).write(to: file)
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let resumeData = DownloadResumeData(
            url: server.fileURL, temporaryFileURL: file, bytesOnDisk: 40_000, entityTag: "\"v1\"", lastModified: nil)
        let manager = SessionManager(configuration: .ephemeral, transport: TestTransports.make(transport))
        manager.completionQueue = DispatchQueue(label: "test.completion")
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-resumed-\(UUID())")
        defer { try? FileManager.default.removeItem(at: destination) }
        let outcome = Outcome()
        manager.downloadTask(
            withResumeData: resumeData.encoded(), progress: nil, destination: { _, _ in destination }
        ) { _, _, error in outcome.fulfill(error) }.resume()
        let error = try await outcome.value()
        #expect(error == nil, "\(String(describing: error))")
        #expect(try Data(contentsOf: destination) == body, "the whole resource, not its tail")
        #expect(server.requests.map(\.range) == [nil], "the request asked for no range")
        await manager.settle()
    }
}

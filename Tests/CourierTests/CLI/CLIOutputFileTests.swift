import Foundation
import Testing

@testable import CourierCLI

#if canImport(Glibc)
    import Glibc
#endif

/// `-o` writes into what it names, as curl does, and never replaces it: symbolic links, hard links, permissions,
/// FIFOs survive; other kinds of file are refused.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CLIOutputFileTests {
    static let body = "new body"

    func withServer(_ run: (String, URL) async throws -> Void) async throws {
        let server = try await FaultServer.start(.respond(FaultServer.ok(Self.body), close: true))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-out-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            try await run(server.baseURL.absoluteString + "file", directory)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            try await server.stop()
            throw error
        }
        try? FileManager.default.removeItem(at: directory)
        try await server.stop()
    }

    func text(_ url: URL) throws -> String { String(decoding: try Data(contentsOf: url), as: UTF8.self) }

    @Test func aSymbolicLinkIsFollowedAndKept() async throws {
        try await withServer { url, directory in
            let target = directory.appendingPathComponent("target")
            try Data("old content that is longer".utf8).write(to: target)
            let link = directory.appendingPathComponent("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            let result = try await CourierProcess.run(["-o", link.path, url])
            #expect(result.status == 0, "\(result.stderr)")
            let type = try FileManager.default.attributesOfItem(atPath: link.path)[.type] as? FileAttributeType
            #expect(type == .typeSymbolicLink)
            #expect(try text(target) == Self.body, "written through the link and truncated")
        }
    }

    @Test func hardLinksAndPermissionsSurvive() async throws {
        try await withServer { url, directory in
            let file = directory.appendingPathComponent("private")
            try Data("secret".utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
            let other = directory.appendingPathComponent("other-name")
            try FileManager.default.linkItem(at: file, to: other)
            let result = try await CourierProcess.run(["-o", file.path, url])
            #expect(result.status == 0, "\(result.stderr)")
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect((attributes[.referenceCount] as? NSNumber)?.intValue == 2)
            #expect(try text(other) == Self.body)
        }
    }

    @Test func aNewFileGetsTheUmasksMode() async throws {
        try await withServer { url, directory in
            let file = directory.appendingPathComponent("fresh")
            let result = try await CourierProcess.run(["-o", file.path, url])
            #expect(result.status == 0, "\(result.stderr)")
            let mask = umask(0o022)
            umask(mask)
            let mode = (try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)?
                .intValue
            #expect(mode == 0o666 & ~Int(mask))
        }
    }

    @Test func aFIFOIsWrittenAsAStream() async throws {
        try await withServer { url, directory in
            let fifo = directory.appendingPathComponent("fifo")
            #expect(mkfifo(fifo.path, 0o600) == 0)
            let received = Task {
                try await OffPool.run { () -> Data in
                    // Opening for reading waits for the writer, as the writer's open waits for this reader.
                    guard let handle = FileHandle(forReadingAtPath: fifo.path) else { return Data() }
                    defer { try? handle.close() }
                    return handle.readDataToEndOfFile()
                }
            }
            let result = try await CourierProcess.run(["-o", fifo.path, url])
            // Had courier never opened the FIFO, the reader would wait forever: a writer that opens and closes at
            // once ends its read (and fails harmlessly when the reader is gone).
            let unblock = open(fifo.path, O_WRONLY | O_NONBLOCK)
            if unblock >= 0 { close(unblock) }
            #expect(result.status == 0, "\(result.stderr)")
            #expect(String(decoding: try await received.value, as: UTF8.self) == Self.body)
            var status = stat()
            #expect(stat(fifo.path, &status) == 0)
            #expect(status.st_mode & S_IFMT == S_IFIFO)
        }
    }

    @Test func aDirectoryIsRefused() async throws {
        try await withServer { url, directory in
            let result = try await CourierProcess.run(["-o", directory.path, url])
            #expect(result.status == 1)
            #expect(result.stderr.contains("cannot write \(directory.path)"), "\(result.stderr)")
        }
    }
}

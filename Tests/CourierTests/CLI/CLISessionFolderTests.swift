import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The folder of a `--session`: whatever mode it had, it is private (0700) once courier has written a session in it.
@Suite struct CLISessionFolderTests {
    private func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    @Test func anExistingOpenFolderIsMadePrivate() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("courier-session-folder-\(UUID())")
        defer { try? FileManager.default.removeItem(at: config) }
        let server = try await FaultServer.start(.respond(FaultServer.ok("fine"), close: true))
        defer { Task { try await server.stop() } }
        let folder = config.appendingPathComponent("courier/sessions/127.0.0.1_\(server.port)")
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        #expect(mode(folder.path) == 0o755)

        // A header item changes the session, so it is written.
        let result = try await CourierProcess.run(
            ["--session", "work", server.baseURL.absoluteString, "X-Team:compilers"],
            environment: ["XDG_CONFIG_HOME": config.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(mode(folder.appendingPathComponent("work.json").path) == 0o600)
        #expect(mode(folder.path) == 0o700)
    }
}

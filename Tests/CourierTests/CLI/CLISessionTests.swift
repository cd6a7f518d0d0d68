import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#endif

/// `courier --session NAME` and `--session-read-only NAME` against httpbin: cookies, custom headers and credentials
/// kept between invocations in a mode-0600 file under the configuration folder.
@Suite(.serialized) struct CLISessionTests {
    private func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    @Test func cookiesHeadersAndAuthAreKept() async throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("courier-sessions-\(UUID())")
        defer { try? FileManager.default.removeItem(at: config) }
        let environment = ["XDG_CONFIG_HOME": config.path]
        let base = try await HTTPBin.url("get").deletingLastPathComponent()
        let folder = config.appendingPathComponent("courier/sessions/\(base.host ?? "")_\(base.port ?? 0)")
        let file = folder.appendingPathComponent("work.json")

        let first = try await CourierProcess.run(
            [
                "--session", "work", "--auth", "ada:lovelace", base.absoluteString + "cookies/set?sid=abc123",
                "X-Team:compilers", "Content-Type:text/plain",
            ], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(mode(file.path) == 0o600)
        #expect(mode(folder.path) == 0o700)
        let saved = try JSONDecoder().decode(
            StoredSessionShape.self, from: try Data(contentsOf: file))
        #expect(saved.cookies.map(\.name) == ["sid"])
        #expect(saved.headers.map(\.name) == ["X-Team"])  // Content-* describes one request's body: not kept
        #expect(saved.auth?.username == "ada")

        let second = try await CourierProcess.run(
            ["--session", "work", base.absoluteString + "headers"], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        let headers = try second.json()["headers"] as? [String: String] ?? [:]
        #expect(headers["Cookie"] == "sid=abc123")
        #expect(headers["X-Team"] == "compilers")
        #expect(headers["Authorization"] == "Basic " + Data("ada:lovelace".utf8).base64EncodedString())

        // Read-only: used, never written, whatever this invocation adds.
        let before = try Data(contentsOf: file)
        let readOnly = try await CourierProcess.run(
            [
                "--session-read-only", "work", base.absoluteString + "cookies/set?other=1", "X-Extra:yes",
                "--auth", "eve:secret",
            ], environment: environment)
        #expect(readOnly.status == 0, "\(readOnly.stderr)")
        #expect(try Data(contentsOf: file) == before)

        for name in [".hidden", "a b", "..", ""] {
            let badName = try await CourierProcess.run(
                ["--session", name, base.absoluteString + "get"], environment: environment)
            #expect(badName.status == 1, "\(name)")
        }
        let both = try await CourierProcess.run(
            ["--session", "a", "--session-read-only", "b", base.absoluteString + "get"], environment: environment)
        #expect(both.status == 1)
    }
}

/// The parts of a session file the test reads.
private struct StoredSessionShape: Decodable {
    struct Named: Decodable { var name: String }
    struct Auth: Decodable { var username: String }
    var headers: [Named]
    var cookies: [Named]
    var auth: Auth?
}

/// `courier --generate-completion-script` for bash, zsh and fish, from the argument parser.
@Suite struct CLICompletionTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScripts(shell: String) async throws {
        let result = try await CourierProcess.run(["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.stderr)")
        // fish names options without their dashes.
        for option in ["proxy", "session-read-only", "http1", "pin-public-key"] {
            #expect(result.stdout.contains(option), "\(shell): \(option)")
        }
        let subcommandOptions = [
            "request": [
                "raw", "ignore-stdin", "auth-type", "ignore-netrc", "unix-socket", "resolve", "connect-to",
                "connect-timeout", "meta", "write-out", "cert-key-pass", "tls-min", "tls-max",
            ],
            "ws": ["wait", "no-close"],
        ]
        for (subcommand, options) in subcommandOptions {
            let part = Self.part(of: result.stdout, for: subcommand, shell: shell)
            #expect(!part.isEmpty, "\(shell): no part for \(subcommand)")
            for option in options {
                // Each option is looked for where the subcommand's own are, as the shell names it.
                let written = shell == "fish" ? "-l '\(option)'" : "--\(option)"
                #expect(part.contains(written), "\(shell) \(subcommand): \(written)")
            }
        }
        if shell == "bash" {
            let script = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID()).bash")
            defer { try? FileManager.default.removeItem(at: script) }
            try Data(result.stdout.utf8).write(to: script)
            #expect(try await ChildProcess.run("/bin/bash", ["-n", script.path]).status == 0)
        }
    }

    /// The part of a completion script that completes `subcommand`: its function in bash and zsh, its `complete`
    /// lines in fish.
    private static func part(of script: String, for subcommand: String, shell: String) -> String {
        if shell == "fish" {
            return script.split(separator: "\n").filter { $0.contains("\"courier \(subcommand)\"") }
                .joined(separator: "\n")
        }
        guard let start = script.range(of: "_courier_\(subcommand)() {") else { return "" }
        let rest = script[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n}\n")?.lowerBound ?? rest.endIndex)])
    }
}

import Foundation
import Testing

@testable import CourierCLI

/// The `courier` executable, run as a process against httpbin: verbs, items, files, `--offline`, downloads with
/// `--continue`, exit statuses and the forced progress bar. Standard output is a pipe here, so bodies come out raw.
///
/// Serialized: each test starts several processes, and running them all at once would load the machine enough to
/// disturb the timing-sensitive tests of other suites.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct CLIExecutableTests {
    func url(_ path: String) async throws -> String {
        try await HTTPBin.url(path).absoluteString
    }

    func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func getWithQueryItemsAndHeaders() async throws {
        let result = try await CourierProcess.run([try await url("get"), "q==a b", "tag==x", "X-Token:secret"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["args"] as? [String: String] == ["q": "a b", "tag": "x"])
        let headers = try #require(json["headers"] as? [String: String])
        #expect(headers["X-Token"] == "secret")
        #expect(headers["User-Agent"]?.hasPrefix("courier/") == true)
        #expect(json["url"] as? String == (try await url("get?q=a%20b&tag=x")))
    }

    @Test func dataFieldsMakeAJSONPostByDefault() async throws {
        let result = try await CourierProcess.run([
            try await url("post"), "name=bang", "n:=1", "ok:=true", "user[tags][]=a", "user[tags][]=b",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["data"] as? String == #"{"n":1,"name":"bang","ok":true,"user":{"tags":["a","b"]}}"#)
        #expect((json["headers"] as? [String: String])?["Content-Type"] == "application/json")
    }

    @Test(arguments: ["PUT", "PATCH", "DELETE"])
    func verbs(method: String) async throws {
        let result = try await CourierProcess.run([method, try await url(method.lowercased()), "name=bang"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        if method == "DELETE" {
            // DELETE puts parameters in the query, as every Courier serializer does.
            #expect(json["args"] as? [String: String] == ["name": "bang"])
        } else {
            #expect(json["json"] as? [String: String] == ["name": "bang"])
        }
    }

    @Test func formAndFileItems() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let note = directory.appendingPathComponent("note.txt")
        try Data("hello from a file".utf8).write(to: note)
        let meta = directory.appendingPathComponent("meta.json")
        try Data(#"{"v": [1, 2]}"#.utf8).write(to: meta)

        let form = try await CourierProcess.run([
            "--form", try await url("post"), "name=bang", "note=@\(note.path)",
        ])
        #expect(form.status == 0, "\(form.stderr)")
        #expect(try form.json()["form"] as? [String: String] == ["name": "bang", "note": "hello from a file"])

        let json = try await CourierProcess.run([try await url("post"), "meta:=@\(meta.path)", "note=@\(note.path)"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(try json.json()["data"] as? String == #"{"meta":{"v":[1,2]},"note":"hello from a file"}"#)

        let missing = try await CourierProcess.run([try await url("post"), "note=@\(directory.path)/nope.txt"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("nope.txt"), "\(missing.stderr)")
    }

    @Test func fileFieldsAreSentAsMultipartFormData() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("notes.txt")
        try Data(String(repeating: "line of text\n", count: 5000).utf8).write(to: file)

        let result = try await CourierProcess.run(
            [try await url("post"), "title=trip", "notes@\(file.path)"], environment: ["COURIER_FORCE_PROGRESS": "1"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["form"] as? [String: String] == ["title": "trip"])
        #expect(json["files"] as? [String: String] == ["notes": String(repeating: "line of text\n", count: 5000)])
        let contentType = (json["headers"] as? [String: String])?["Content-Type"] ?? ""
        #expect(contentType.hasPrefix("multipart/form-data; boundary="))
        #expect(result.stderr.contains("upload  [########################]  100%"), "\(result.stderr)")

        let fieldsOnly = try await CourierProcess.run(["--multipart", try await url("post"), "a=1"])
        #expect(try fieldsOnly.json()["form"] as? [String: String] == ["a": "1"])

        let offline = try await CourierProcess.run(["--offline", ":1/up", "a=1", "f@\(file.path);type=text/plain"])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.hasPrefix("POST /up HTTP/1.1\n"))
        #expect(offline.stdout.contains("Content-Type: multipart/form-data; boundary="))
        #expect(offline.stdout.contains("Content-Disposition: form-data; name=\"f\"; filename=\"notes.txt\"\r\n"))
        #expect(offline.stdout.contains("Content-Type: text/plain\r\n"))

        let asJSON = try await CourierProcess.run(["--json", try await url("post"), "upload@\(file.path)"])
        #expect(asJSON.status == 1)
        #expect(asJSON.stderr.contains("cannot be used with --json"), "\(asJSON.stderr)")

        let get = try await CourierProcess.run(["GET", try await url("get"), "upload@\(file.path)"])
        #expect(get.status == 1)
        #expect(get.stderr.contains("cannot be sent with GET"), "\(get.stderr)")

        let missing = try await CourierProcess.run([try await url("post"), "upload@\(directory.path)/nope.bin"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("nope.bin"), "\(missing.stderr)")
    }

    @Test func offlinePrintsTheSerializedRequestAndSendsNothing() async throws {
        // Port 1 on loopback refuses connections: had the request been sent, the run would fail.
        let result = try await CourierProcess.run([
            "--offline", "PUT", "127.0.0.1:1/items/7", "q==x y", "name=bang", "n:=2", "X-Trace:abc", "Accept-Language:",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.components(separatedBy: "\n")
        #expect(lines.first == "PUT /items/7?q=x%20y HTTP/1.1")
        #expect(lines.contains("Host: 127.0.0.1:1"))
        #expect(lines.contains("Content-Type: application/json"))
        #expect(lines.contains("Content-Length: 21"))
        #expect(lines.contains("X-Trace: abc"))
        #expect(!result.stdout.contains("Accept-Language"))
        #expect(result.stdout.hasSuffix("\n\n{\"n\":2,\"name\":\"bang\"}\n"))

        let form = try await CourierProcess.run(["--offline", "--form", "--print=B", ":1/x", "a=1", "b=x&y"])
        #expect(form.stdout == "a=1&b=x%26y\n")
    }

    @Test func verboseAndPrintChooseWhatIsShownWhere() async throws {
        let verbose = try await CourierProcess.run(["-v", try await url("get"), "a==1"])
        #expect(verbose.status == 0)
        #expect(verbose.stderr.contains("GET /get?a=1 HTTP/1.1"), "\(verbose.stderr)")
        #expect(verbose.stderr.contains("HTTP/1.1 200 OK"))
        #expect(try verbose.json()["args"] as? [String: String] == ["a": "1"])

        let headOnly = try await CourierProcess.run(["--print=h", try await url("get")])
        #expect(headOnly.stdout.isEmpty)
        #expect(headOnly.stderr.hasPrefix("HTTP/1.1 200 OK\n"))
        #expect(headOnly.stderr.contains("Content-Type: application/json"))

        let pretty = try await CourierProcess.run(["--pretty=format", try await url("get"), "a==1"])
        #expect(pretty.stdout.contains("\n    \"args\": {\n        \"a\": \"1\"\n    },\n"), "\(pretty.stdout)")
        #expect(!pretty.stdout.contains("\u{1B}["))

        let coloured = try await CourierProcess.run(["--pretty=all", try await url("get"), "a==1"])
        #expect(coloured.stdout.contains("\u{1B}[34m\"args\"\u{1B}[0m: {"), "\(coloured.stdout)")

        let bad = try await CourierProcess.run(["--print=Hx", try await url("get")])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("“x” is not one of"))
    }

    @Test func downloadNamesTheFileFromContentDispositionOrTheURL() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let named = try await CourierProcess.run(
            ["-d", try await url("response-headers"), #"Content-Disposition==attachment; filename="report.json""#],
            in: directory)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("report.json").path))
        #expect(named.stdout.isEmpty)

        let fromURL = try await CourierProcess.run(["-d", try await url("range/300")], in: directory)
        #expect(fromURL.status == 0, "\(fromURL.stderr)")
        let saved = try Data(contentsOf: directory.appendingPathComponent("300"))
        #expect(saved == Self.rangeBody(300))
        #expect(fromURL.stderr.contains("saved 300: 300 bytes"))

        let again = try await CourierProcess.run(["-d", try await url("range/300")], in: directory)
        #expect(again.status == 0)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("300-1").path))

        let failed = try await CourierProcess.run(["-d", try await url("status/404")], in: directory)
        #expect(failed.status == 4)
        #expect(failed.stderr.contains("download not saved: HTTP 404"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("404").path))
    }

    /// httpbin's `/range/n` body: the alphabet, repeated.
    static func rangeBody(_ count: Int) -> Data {
        Data((0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) })
    }

    @Test func continueAppendsAfterA206AndRestartsAfterA200() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("part.bin")
        try Self.rangeBody(5000).prefix(1234).write(to: file)
        let resumed = try await CourierProcess.run(["-o", file.path, "--continue", try await url("range/5000")])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try Data(contentsOf: file) == Self.rangeBody(5000))
        #expect(resumed.stderr.contains("resumed at byte 1234"), "\(resumed.stderr)")

        let complete = try await CourierProcess.run(["-o", file.path, "-c", try await url("range/5000")])
        #expect(complete.status == 0, "\(complete.stderr)")
        #expect(complete.stderr.contains("already complete"))
        #expect(try Data(contentsOf: file) == Self.rangeBody(5000))

        // /bytes ignores Range and answers 200: the partial file is replaced, not appended to.
        let other = directory.appendingPathComponent("bytes.bin")
        try Data(repeating: 0xFF, count: 40).write(to: other)
        let restarted = try await CourierProcess.run(["-o", other.path, "-c", try await url("bytes/100?seed=3")])
        #expect(restarted.status == 0, "\(restarted.stderr)")
        #expect(try Data(contentsOf: other).count == 100)
        #expect(restarted.stderr.contains("ignored the range request"))

        let withoutDownload = try await CourierProcess.run(["--continue", try await url("get")])
        #expect(withoutDownload.status == 1)
        #expect(withoutDownload.stderr.contains("--continue resumes a download"))
    }

    @Test func aDownloadCutByATimeoutKeepsItsBytesAndContinues() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("slow.bin")
        // 100 bytes every 0.4 s: the 0.3 s idle timeout cuts it after the first chunks.
        let cut = try await CourierProcess.run([
            "-o", file.path, "--timeout", "0.3", try await url("range/2000?duration=8&chunk_size=100"),
        ])
        #expect(cut.status == 2, "\(cut.stderr)")
        let kept = try Data(contentsOf: file)
        #expect(kept.count > 0 && kept.count < 2000)
        #expect(
            cut.stderr.contains("\(kept.count) bytes kept in \(file.path), resume with --continue"), "\(cut.stderr)")

        let resumed = try await CourierProcess.run(["-o", file.path, "--continue", try await url("range/2000")])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("resumed at byte \(kept.count)"))
        #expect(try Data(contentsOf: file) == Self.rangeBody(2000))
    }

    @Test func progressBarOnlyWhenForced() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = try await CourierProcess.run(["-d", try await url("range/20000")], in: directory)
        #expect(plain.status == 0)
        #expect(!plain.stderr.contains("%"), "no bar when standard error is not a terminal: \(plain.stderr)")

        let forced = try await CourierProcess.run(
            ["-d", "-o", "forced.bin", try await url("range/20000")], in: directory,
            environment: ["COURIER_FORCE_PROGRESS": "1"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let frames = forced.stderr.components(separatedBy: "\r").filter { !$0.isEmpty }
        let last = try #require(frames.last?.components(separatedBy: "\n").first)
        #expect(last.hasPrefix("forced.bin  [########################]  100%  19.5 KiB / 19.5 KiB  "), "\(last)")
        #expect(last.contains("/s"))

        let flag = try await CourierProcess.run(
            ["-d", "-o", "flag.bin", "--force-progress", try await url("range/20000")], in: directory)
        #expect(flag.stderr.contains("100%"))
    }

    @Test func exitStatuses() async throws {
        let timeout = try await CourierProcess.run(["--timeout", "0.5", try await url("delay/5")])
        #expect(timeout.status == 2)
        #expect(timeout.stderr.contains("timed out after 0.5 s"), "\(timeout.stderr)")

        let redirects = try await CourierProcess.run([
            "--follow", "--max-redirects", "2", try await url("redirect/4"),
        ])
        #expect(redirects.status == 3)
        #expect(redirects.stderr.contains("too many redirects: more than 2"), "\(redirects.stderr)")

        let followed = try await CourierProcess.run(["--follow", "--check-status", try await url("redirect/2")])
        #expect(followed.status == 0, "\(followed.stderr)")
        #expect(try followed.json()["url"] as? String == (try await url("get")))

        let notFollowed = try await CourierProcess.run(["--check-status", try await url("redirect/1")])
        #expect(notFollowed.status == 3)

        for (code, status) in [(404, Int32(4)), (418, 4), (500, 5), (503, 5)] {
            let checked = try await CourierProcess.run(["--check-status", try await url("status/\(code)")])
            #expect(checked.status == status, "\(code)")
            #expect(checked.stderr.contains("warning: HTTP \(code)"))
            let unchecked = try await CourierProcess.run([try await url("status/\(code)")])
            #expect(unchecked.status == 0, "\(code) without --check-status")
        }

        let refused = try await CourierProcess.run(["127.0.0.1:1/x"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("could not connect to 127.0.0.1:1"), "\(refused.stderr)")

        let usage = try await CourierProcess.run([try await url("get"), "notanitem"])
        #expect(usage.status == 1)
        #expect(usage.stderr.contains("“notanitem” is not a request item"))
    }

    @Test func authentication() async throws {
        let basic = try await CourierProcess.run(["--auth", "user:p:ss", try await url("basic-auth/user/p:ss")])
        #expect(basic.status == 0, "\(basic.stderr)")
        #expect(try basic.json()["authenticated"] as? Bool == true)

        let digest = try await CourierProcess.run([
            "--auth", "user:pass", "--auth-type", "digest", "--check-status",
            try await url("digest-auth/auth/user/pass"),
        ])
        #expect(digest.status == 0, "\(digest.stderr)")

        let wrong = try await CourierProcess.run([
            "--auth", "user:nope", "--check-status", try await url("basic-auth/user/pass"),
        ])
        #expect(wrong.status == 4)
    }

    @Test func tlsFlagsAreCheckedBeforeAnythingIsSent() async throws {
        let badPin = try await CourierProcess.run(["--pin-public-key", "abc", "https://127.0.0.1:1/"])
        #expect(badPin.status == 1)
        #expect(badPin.stderr.contains("not a base64 SHA-256 digest"))

        let missing = try await CourierProcess.run(["--cacert", "/nonexistent/ca.pem", "https://127.0.0.1:1/"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("--cacert /nonexistent/ca.pem"))

        let keyAlone = try await CourierProcess.run(["--key", "/etc/hostname", "https://127.0.0.1:1/"])
        #expect(keyAlone.stderr.contains("--key needs --cert"))
    }

    @Test func pinnedRequestsPassAndOtherPinsAreRefused() async throws {
        let server = try await DemoServer.start(archiveSize: 1024)
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try server.chain.write(to: directory)
        let url = server.httpsBaseURL.absoluteString + "search"
        let leafPin = server.chain.leaf.publicKeyHashBase64

        let pinned = try await CourierProcess.run([
            "--cacert", files.root.path, "--pin-public-key", leafPin, url, "q==tls",
        ])
        #expect(pinned.status == 0, "\(pinned.stderr)")
        #expect(try pinned.json()["query"] as? String == "q=tls")

        let certificatePin = try await CourierProcess.run([
            "--cacert", files.root.path, "--pin-cert", files.intermediate.path, url,
        ])
        #expect(certificatePin.status == 0, "\(certificatePin.stderr)")

        let otherPin = Data(repeating: 7, count: 32).base64EncodedString()
        let refused = try await CourierProcess.run([
            "--cacert", files.root.path, "--pin-public-key", "sha256//" + otherPin, url,
        ])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("TLS: the certificate chain of 127.0.0.1 was refused"), "\(refused.stderr)")
        #expect(refused.stderr.contains(leafPin), "the message lists the chain's keys: \(refused.stderr)")

        let untrusted = try await CourierProcess.run([url])
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.contains("127.0.0.1"), "\(untrusted.stderr)")

        let insecure = try await CourierProcess.run(["--insecure", url, "q==anyway"])
        #expect(insecure.status == 0, "\(insecure.stderr)")
        await server.stop()
    }
}

import Foundation
import Testing

@testable import Courier

/// `courier`'s cookies: one jar per run (each `--follow` hop sends what the hops before set), `--session` files
/// that persist the jar field by field, curl's `-b`/`--cookie` and `--cookie-jar` files; across sites through
/// ``CookieOriginServer`` as the proxy, so `home.example.org` and `evil.example.com` are different hosts.
@Suite(.serialized) struct CLICookieTests {
    private func withServer(_ body: (CookieOriginServer, [String: String]) async throws -> Void) async throws {
        let server = try await CookieOriginServer.start()
        defer { server.stop() }
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cookies-\(UUID())")
        defer { try? FileManager.default.removeItem(at: config) }
        try await body(server, ["XDG_CONFIG_HOME": config.path, "NO_PROXY": "", "no_proxy": ""])
    }

    private func courier(_ server: CookieOriginServer, _ arguments: [String], environment: [String: String])
        async throws -> CourierProcess.Result
    {
        let result = try await CourierProcess.run(
            ["--proxy", server.proxyURL.absoluteString, "--print", "b"] + arguments, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        return result
    }

    /// A login redirect that sets a cookie works in one `--follow` run: the next hop sends it.
    @Test func followSendsWhatTheRedirectSet() async throws {
        try await withServer { server, environment in
            let login =
                "http://home.example.org"
                + CookieOriginServer.path(
                    "/redirect", to: "http://home.example.org/account", setting: ["sid=s3cret; Path=/; HttpOnly"])
            let result = try await courier(server, ["--follow", login], environment: environment)
            #expect(result.stdout == "sid=s3cret")
        }
    }

    /// The cookie-injection report: a host the request was redirected to sets `Domain=home.example.org`; it is
    /// refused, in the run and in the session file, and the next run to home does not send it.
    @Test func redirectedHostCannotSetCookiesForHome() async throws {
        try await withServer { server, environment in
            let evil =
                "http://evil.example.com"
                + CookieOriginServer.path(
                    "/redirect", to: "http://home.example.org/after",
                    setting: ["sid=attacker; Domain=home.example.org; Path=/", "tossed=1; Domain=example.org"])
            let start =
                "http://home.example.org"
                + CookieOriginServer.path(
                    "/redirect", to: evil, setting: ["sid=genuine; Path=/"])
            let first = try await courier(server, ["--session", "s", "--follow", start], environment: environment)
            #expect(first.stdout == "sid=genuine")
            let second = try await courier(
                server, ["--session", "s", "http://home.example.org/check"], environment: environment)
            #expect(second.stdout == "sid=genuine")
            #expect(server.requests.contains { $0.host == "evil.example.com" && $0.cookie.isEmpty })
        }
    }

    /// Issue 32's cookie tossing, as it was reported: `localhost`, reached by a redirect, sets `Domain=127.0.0.1`;
    /// the next `--session` run to 127.0.0.1 must not send it.
    @Test func tossingAcrossLocalhostAndTheLoopbackAddress() async throws {
        let port = Locked(0)
        let server = try await FaultServer.start(
            .reply(close: true) { head in
                let request = CookieSessionTests.parse(head)
                switch request.path {
                case "/login":
                    return CookieSessionTests.response(
                        "302 Found", ["Set-Cookie: sid=1; Path=/", "Location: http://localhost:\(port.value)/toss"])
                case "/toss":
                    return CookieSessionTests.response(
                        "302 Found",
                        ["Set-Cookie: tossed=1; Domain=127.0.0.1; Path=/", "Location: http://127.0.0.1:\(port.value)/"])
                default:
                    return CookieSessionTests.response("200 OK", ["Content-Type: text/plain"], body: request.cookie)
                }
            })
        defer { Task { try? await server.stop() } }
        port.withLock { $0 = server.port }
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("courier-toss-\(UUID())")
        defer { try? FileManager.default.removeItem(at: config) }
        let environment = ["XDG_CONFIG_HOME": config.path, "NO_PROXY": "*", "no_proxy": "*"]
        let first = try await CourierProcess.run(
            [
                "--print", "b", "--session", "t", "--follow",
                server.baseURL.appendingPathComponent("login").absoluteString,
            ],
            environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "sid=1")
        let second = try await CourierProcess.run(
            ["--print", "b", "--session", "t", server.baseURL.appendingPathComponent("check").absoluteString],
            environment: environment)
        #expect(second.stdout == "sid=1")
    }

    /// `Domain=org` and `Domain=co.uk` are public suffixes: never stored, never sent.
    @Test func publicSuffixDomainsAreRefused() async throws {
        try await withServer { server, environment in
            _ = try await courier(
                server,
                [
                    "--session", "ps",
                    "http://home.example.org" + CookieOriginServer.path("/set", setting: ["a=1; Domain=org"]),
                ], environment: environment)
            _ = try await courier(
                server,
                [
                    "--session", "ps",
                    "http://www.example.co.uk" + CookieOriginServer.path("/set", setting: ["b=1; Domain=co.uk"]),
                ], environment: environment)
            let other = try await courier(
                server, ["--session", "ps", "http://other.org/"], environment: environment)
            #expect(other.stdout == "")
            let home = try await courier(
                server, ["--session", "ps", "http://home.example.org/"], environment: environment)
            #expect(home.stdout == "")
        }
    }

    /// Logging out with `Max-Age=0` removes the session's cookie; `Domain=example.org` reaches a sibling; a path
    /// covers only what is under it.
    @Test func maxAgeZeroDomainAndPathAcrossSessionRuns() async throws {
        try await withServer { server, environment in
            // Session files are per host, as HTTPie's: the sibling is reached by a redirect in the same run.
            let set = CookieOriginServer.path(
                "/redirect", to: "http://sibling.example.org/foobar",
                setting: ["sid=1; Path=/", "wide=1; Domain=example.org", "narrow=1; Path=/foo"])
            let sibling = try await courier(
                server, ["--session", "m", "--follow", "http://home.example.org" + set], environment: environment)
            #expect(sibling.stdout == "wide=1")
            let foo = try await courier(
                server, ["--session", "m", "http://home.example.org/foo/x"], environment: environment)
            #expect(foo.stdout == "narrow=1; sid=1; wide=1")
            let foobar = try await courier(
                server, ["--session", "m", "http://home.example.org/foobar"], environment: environment)
            #expect(foobar.stdout == "sid=1; wide=1")
            let logout = CookieOriginServer.path("/set", setting: ["sid=; Max-Age=0; Path=/"])
            _ = try await courier(
                server, ["--session", "m", "http://home.example.org" + logout], environment: environment)
            let after = try await courier(
                server, ["--session", "m", "http://home.example.org/"], environment: environment)
            #expect(after.stdout == "wide=1")
        }
    }

    /// A session given as a path is one file for every host (HTTPie's rule): a domain cookie home set reaches its
    /// sibling on the next run.
    @Test func pathSessionSpansHosts() async throws {
        try await withServer { server, environment in
            let file = URL(fileURLWithPath: environment["XDG_CONFIG_HOME"]!).appendingPathComponent("s/all.json").path
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let set = CookieOriginServer.path("/set", setting: ["wide=1; Domain=example.org", "mine=1"])
            _ = try await courier(
                server, ["--session", file, "http://home.example.org" + set], environment: environment)
            let sibling = try await courier(
                server, ["--session", file, "http://sibling.example.org/"], environment: environment)
            #expect(sibling.stdout == "wide=1")
            var info = stat()
            #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
        }
    }

    /// One `Set-Cookie` field with a comma in its value stays one cookie through the session file.
    @Test func sessionKeepsFieldsApart() async throws {
        try await withServer { server, environment in
            let set = CookieOriginServer.path("/set", setting: ["foo=\"bar, baz=qux\"", "n=2"])
            _ = try await courier(server, ["--session", "c", "http://h.example" + set], environment: environment)
            let next = try await courier(server, ["--session", "c", "http://h.example/"], environment: environment)
            #expect(next.stdout == "foo=\"bar, baz=qux\"; n=2")
        }
    }

    /// `--cookie-jar FILE` writes curl's format; `-b FILE` reads it back (and curl's own files); `-b NAME=VALUE`
    /// sends to the request's host; a missing `-b` file is taken as empty, as curl takes it.
    @Test func curlCookieFiles() async throws {
        try await withServer { server, environment in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-jar-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("cookies.txt").path
            let set = CookieOriginServer.path("/set", setting: ["a=1; Domain=example.org", "b=2; HttpOnly"])
            _ = try await courier(
                server, ["-b", file, "--cookie-jar", file, "http://www.example.org" + set], environment: environment)
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.hasPrefix("# Netscape HTTP Cookie File"))
            #expect(text.contains(".example.org\tTRUE\t/\tFALSE\t0\ta\t1"))
            #expect(text.contains("#HttpOnly_www.example.org\tFALSE\t/\tFALSE\t0\tb\t2"))
            var info = stat()
            #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
            let read = try await courier(server, ["-b", file, "http://www.example.org/"], environment: environment)
            #expect(read.stdout == "a=1; b=2")
            let toStdout = try await CourierProcess.run(
                [
                    "--proxy", server.proxyURL.absoluteString, "--print", "", "-b", file, "--cookie-jar", "-",
                    "http://www.example.org/",
                ], environment: environment)
            #expect(toStdout.stdout.hasPrefix("# Netscape HTTP Cookie File"))
            #expect(toStdout.stdout.contains("\ta\t1\n"))
            let literal = try await courier(
                server,
                [
                    "--cookie", "x=1; y=2", "--follow",
                    "http://one.example" + CookieOriginServer.path("/redirect", to: "http://two.example/", setting: []),
                ],
                environment: environment)
            #expect(literal.stdout == "")  // for the first host only: the redirect's other host gets none
            #expect(server.requests.contains { $0.host == "one.example" && $0.cookie == "x=1; y=2" })
        }
    }

    /// A session file written before the cookie jar (`expires`, `secure`) still loads, its Secure cookie kept to
    /// https.
    @Test func earlierSessionFilesLoad() async throws {
        try await withServer { server, environment in
            let folder = URL(fileURLWithPath: environment["XDG_CONFIG_HOME"]!)
                .appendingPathComponent("courier/sessions/h.example_80")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let old = """
                {"auth":null,"cookies":[{"domain":"h.example","expires":"2100-01-01T00:00:00Z","name":"a",\
                "path":"/","secure":false,"value":"1"},{"domain":"h.example","name":"s","path":"/","secure":true,\
                "value":"2"}],"headers":[]}
                """
            try Data(old.utf8).write(to: folder.appendingPathComponent("old.json"))
            let result = try await courier(server, ["--session", "old", "http://h.example/"], environment: environment)
            #expect(result.stdout == "a=1")
        }
    }
}

/// The RFC cases of ``CookieJarConformanceTests`` through `courier --follow`: the set URL answers with the case's
/// fields and a redirect to the request URL, which echoes the `Cookie` field the CLI sent.
@Suite(.serialized) struct CLICookieConformanceTests {
    static let server = Task { try await CookieOriginServer.start() }

    /// A field with a control character is left out: the transport refuses the whole response (an HTTP field value
    /// cannot hold one), before any cookie rule applies.
    @Test(
        arguments: CookieJarConformanceTests.allPlainHTTP.filter { test in
            !test.fields.contains { $0.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F } }
        })
    func throughTheCommandLine(_ test: CookieJarConformanceTests.Case) async throws {
        let server = try await Self.server.value
        var set = try #require(URLComponents(string: test.setURL))
        set.percentEncodedQuery =
            CookieOriginServer.query(to: test.requestURL, setting: test.fields)
        let result = try await CourierProcess.run(
            [
                "--proxy", server.proxyURL.absoluteString, "--print", "b", "--follow",
                try #require(set.url).absoluteString,
            ], environment: ["NO_PROXY": "", "no_proxy": ""])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == (test.expected ?? ""), "\(test.name)")
    }
}

import Courier
import Foundation
import Testing

@testable import CourierCLI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `courier` refuses or changes before anything is sent: time limits, ports, header items, JSON items, URL
/// user info, and how the library's errors read as messages.
@Suite struct CLIInputCheckTests {
    func options(_ arguments: [String]) throws -> RequestOptions {
        try RequestCommand.parse(arguments).makeOptions()
    }

    @Test(arguments: ["inf", "1e300", "nan", "0", "-0.5", "1000000001"])
    func timeLimitsThatWouldTrapAreRefused(value: String) throws {
        for flag in ["--timeout", "--max-time"] {
            let error = #expect(throws: CommandFailure.self) { try options(["\(flag)=\(value)", ":1/x"]) }
            #expect(error?.message.contains("give a number of seconds greater than 0") == true, "\(flag) \(value)")
            #expect(error?.message.hasPrefix(flag) == true)
        }
    }

    @Test func timeLimitsInRangeAreKept() throws {
        let parsed = try options(["--timeout", "0.5", "--max-time", "1e9", ":1/x"])
        #expect(parsed.timeout == 0.5)
        #expect(parsed.maxTime == 1e9)
        #expect(TimeLimit.describe(1e9) == "1000000000 s")
        #expect(TimeLimit.describe(0.5) == "0.5 s")
        #expect(TimeLimit.describe(.infinity) == "inf s")
    }

    @Test func maxTimeAndInsecureRedirectsReachTheSessionConfiguration() throws {
        let parsed = try options(["--max-time", "3", "--allow-insecure-redirects", ":1/x"])
        let manager = try RequestRunner(options: parsed, console: CLIRunnerTests.Captured().console()).makeManager()
        defer { manager.invalidate(cancelingTasks: true) }
        #expect(manager.configuration.timeoutIntervalForResource == 3)
        #expect(manager.configuration.allowsInsecureRedirects)
        let plain = try RequestRunner(options: try options([":1/x"]), console: CLIRunnerTests.Captured().console())
            .makeManager()
        defer { plain.invalidate(cancelingTasks: true) }
        #expect(!plain.configuration.allowsInsecureRedirects)
    }

    @Test(arguments: [
        "http://localhost:70000/", ":70000/x", "localhost:65536", "http://[::1]:99999/", "http://h:1x/",
        "http://h:0/", "http://h:99999999999999999999999/",
    ])
    func portsOutOfRangeAreRefused(argument: String) throws {
        let error = #expect(throws: CommandFailure.self) { try RequestPlan.expandURL(argument) }
        #expect(error?.message.contains("is not a number from 1 to 65535") == true, "\(argument)")
    }

    @Test func portsInRangeAndDefaultPortsPass() throws {
        #expect(try RequestPlan.expandURL(":65535/x") == "http://localhost:65535/x")
        #expect(try RequestPlan.expandURL("http://[::1]:8080/") == "http://[::1]:8080/")
        #expect(try RequestPlan.expandURL("http://h:/x") == "http://h:/x")
        #expect(try RequestPlan.expandURL("http://u:p@h:1/x") == "http://u:p@h:1/x")
    }

    @Test func userInfoBecomesTheCredentialAndLeavesTheURL() throws {
        let plan = try RequestPlan(arguments: ["http://us%40er:p%3Ass:w@127.0.0.1:8/x?a=b@c"], requestedMode: nil)
        #expect(plan.url == "http://127.0.0.1:8/x?a=b@c")
        #expect(plan.urlCredential == Credential(user: "us@er", password: "p:ss:w"))
        let auth = try #require(try options(["http://u:p@127.0.0.1:8/"]).auth)
        #expect(auth.credential == Credential(user: "u", password: "p"))
        #expect(auth.scheme == .basic)
        let given = try #require(try options(["--auth", "a:b", "http://u:p@127.0.0.1:8/"]).auth)
        #expect(given.credential == Credential(user: "a", password: "b"), "--auth wins")
        let userOnly = try RequestPlan(arguments: ["http://u@h/"], requestedMode: nil)
        #expect(userOnly.url == "http://h/")
        #expect(userOnly.urlCredential == Credential(user: "u", password: ""))
        #expect(try RequestPlan(arguments: ["http://@h/"], requestedMode: nil).urlCredential == nil)
    }

    @Test func userInfoIsSentAsBasicAuthorization() throws {
        let parsed = try options(["http://u:p@127.0.0.1:8/x"])
        let prepared = try RequestBuilder.build(parsed.plan, auth: parsed.auth, timeout: nil)
        #expect(prepared.urlRequest.url?.absoluteString == "http://127.0.0.1:8/x")
        #expect(prepared.urlRequest.value(forHTTPHeaderField: "Authorization") == "Basic dTpw")
    }

    @Test(arguments: ["X-A:foo\r\nX-B: evil", "X-A:foo\nbar", "X-A:a\u{0}b", "X-A\r\nX-B:x", "Bad Name:x", ":x"])
    func headerItemsThatAreNotOneLineAreRefused(item: String) throws {
        let plan = try RequestPlan(arguments: [":1/x", item], requestedMode: nil)
        let error = #expect(throws: CommandFailure.self) { try RequestBuilder.build(plan, auth: nil, timeout: nil) }
        #expect(error?.message.contains("header") == true, "\(item)")
        #expect(error?.message.contains("\r") == false)
        #expect(error?.message.contains("\n") == false)
    }

    @Test func invalidJSONItemsAreQuotedShort() throws {
        let huge = String(repeating: "[", count: 200_000) + "x"
        let plan = try RequestPlan(arguments: [":1/x", "name:=\(huge)"], requestedMode: nil)
        let error = #expect(throws: CommandFailure.self) { try RequestBuilder.build(plan, auth: nil, timeout: nil) }
        let message = try #require(error?.message)
        #expect(message.count < 200, "\(message.count) characters")
        #expect(message.contains("[[[[…” is not valid JSON"), "\(message)")
    }

    @Test func downloadsAskForTheBodyAsStored() throws {
        var request = URLRequest(url: try #require(URL(string: "http://h/")))
        RequestRunner.askForIdentityEncoding(
            &request, plan: try RequestPlan(arguments: ["h"], requestedMode: nil))
        #expect(request.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
        var chosen = URLRequest(url: try #require(URL(string: "http://h/")))
        RequestRunner.askForIdentityEncoding(
            &chosen, plan: try RequestPlan(arguments: ["h", "accept-encoding:gzip"], requestedMode: nil))
        #expect(chosen.value(forHTTPHeaderField: "Accept-Encoding") == nil)
    }

    // MARK: Messages for the library's errors

    static let limits = TransferLimits(timeout: nil, maxTime: nil, maximumRedirects: 30)

    static func request(_ text: String) throws -> URLRequest {
        URLRequest(url: try #require(URL(string: text)))
    }

    @Test func insecureRedirectsAndUnsupportedSchemesSayWhy() throws {
        let original = try Self.request("https://a.example/x")
        let from = try #require(URL(string: "https://a.example/x"))
        let to = try #require(URL(string: "http://a.example/y"))
        let insecure = CommandFailure(
            error: CourierError.insecureRedirect(from: from, to: to, context: .init(request: original)),
            request: original, limits: Self.limits)
        #expect(
            insecure.message
                == "refused to follow a redirect from https://a.example/x to http://a.example/y: it would leave TLS; "
                + "use --allow-insecure-redirects to follow it")
        let ftp = try #require(URL(string: "ftp://a.example/f"))
        let unsupported = CommandFailure(
            error: CourierError.unsupportedURL(ftp, reason: "redirect to ftp", context: .init(request: original)),
            request: original, limits: Self.limits)
        #expect(unsupported.message.contains("the scheme “ftp” is not supported"), "\(unsupported.message)")
        #expect(unsupported.message.contains("redirects only to http and https"))
    }

    @Test func badResponsesPrintTheirReason() throws {
        let original = try Self.request("http://a.example:81/x")
        for reason in ["the response body expands beyond 1 GiB when decompressed", "the gzip body is corrupt"] {
            let failure = CommandFailure(
                error: CourierError.badServerResponse(
                    reason: reason, underlyingError: nil, context: .init(request: original)),
                request: original, limits: Self.limits)
            #expect(failure.message.contains(reason), "\(failure.message)")
            #expect(failure.message.contains("a.example:81"))
        }
    }

    @Test func aFailedHopIsNamed() throws {
        let original = try Self.request("http://first.example:81/start")
        let hop = try Self.request("http://second.example:82/next")
        let failure = CommandFailure(
            error: CourierError.cannotConnect(
                host: "second.example", underlyingError: nil, context: .init(request: hop)),
            request: original, limits: Self.limits)
        #expect(failure.message.contains("second.example:82"), "\(failure.message)")
        #expect(failure.message.contains("GET http://second.example:82/next"))
        #expect(!failure.message.contains("first.example"))
    }

    @Test func theLimitThatRanOutIsNamed() throws {
        let original = try Self.request("http://a.example/x")
        let timedOut = CourierError.timedOut(context: .init(request: original))
        var limits = TransferLimits(timeout: 30, maxTime: 1, maximumRedirects: 30)
        limits.started = .now - .seconds(2)
        let overall = CommandFailure(error: timedOut, request: original, limits: limits)
        #expect(overall.status == .timedOut)
        #expect(overall.message.contains("did not finish within --max-time 1 s"), "\(overall.message)")
        limits.started = .now
        let idle = CommandFailure(error: timedOut, request: original, limits: limits)
        #expect(idle.message.contains("timed out after 30 s"), "\(idle.message)")
    }
}

import ArgumentParser
import Courier
import Foundation

/// `courier [METHOD] URL [ITEM ...]`: builds a request with Courier's serializers, sends it with a
/// ``SessionManager`` and prints the response.
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send a request (the default command): courier [METHOD] URL [ITEM ...]",
        usage: "courier [METHOD] URL [ITEM ...] [OPTIONS]",
        discussion: """
            Items:
              name==value     query parameter
              Header:value    header (Header: removes it, Header; sends it empty)
              name=value      data field (user[name]=x and tags[]=a nest)
              name:=json      raw JSON field (n:=1, ok:=true, tags:='["a"]')
              name=@file      data field from a file's text (name:=@file: JSON from a file)
              name@file       file field; makes the request multipart
              @file           the file is the whole body (Content-Type from its extension)
            Body: redirected standard input is the whole body when there are no data fields (empty input
            counts as none); --raw TEXT sends TEXT; --ignore-stdin leaves standard input alone.
            URLs: :8080/x is http://localhost:8080/x; no scheme means http://.
            --timeout limits each wait for the next bytes; --max-time limits the whole transfer.
            Exit status: 0 ok, 1 error, 2 timeout (--timeout or --max-time), 3 too many redirects,
            4 and 5 for a 4xx and a 5xx response with --check-status.
            """)

    @Argument(help: ArgumentHelp("[METHOD] URL [ITEM ...]", valueName: "arguments"))
    var arguments: [String] = []

    @Flag(name: [.short, .long], help: "Send data fields as a JSON object (the default).")
    var json = false
    @Flag(name: [.short, .long], help: "Send data fields as a URL-encoded form.")
    var form = false
    @Flag(help: "Send data fields and files as multipart form data (name@file items imply it).")
    var multipart = false
    @Option(help: ArgumentHelp("Send TEXT as the whole body (no data fields).", valueName: "TEXT"))
    var raw: String?
    @Flag(help: "Do not send redirected standard input as the body.")
    var ignoreStdin = false

    @Flag(
        name: [.short, .long],
        help: "Print the request and the response head too (like --print=HBhb), and each exchange's timings.")
    var verbose = false
    @Option(name: [.short, .long], help: "What to print: H request head, B request body, h response head, b body.")
    var print: String?
    @Option(help: "Format and colour bodies: auto (on a terminal), all, colors, format, none.")
    var pretty: String = PrettyMode.auto.rawValue
    @Flag(help: "Print the request as it would be sent, and do not send it.")
    var offline = false
    @Flag(
        help: ArgumentHelp(
            "After the body, print the elapsed time and the connect, TLS handshake, first-byte and total times "
                + "(HTTPie's)."))
    var meta = false
    @Option(
        name: [.customShort("w"), .customLong("write-out")],
        help: ArgumentHelp(
            "After the transfer, print FORMAT with %{http_code}, %{time_total}, %{time_connect} (TCP), "
                + "%{time_appconnect} (TLS done), %{time_starttransfer}, %{size_download} and %{remote_ip} filled in "
                + "(curl's).", valueName: "FORMAT"))
    var writeOut: String?

    @Flag(name: [.short, .long], help: "Save the body to a file named from Content-Disposition or the URL.")
    var download = false
    @Option(name: [.short, .long], help: "Save the body to this file (implies --download).")
    var output: String?
    @Flag(
        name: [.customShort("c"), .customLong("continue")], help: "Resume a partial download (Range: bytes=<size>-).")
    var resume = false

    @Option(help: "Seconds to wait for the response or the next bytes of it (an idle timeout).")
    var timeout: Double?
    @Option(help: "Seconds the whole transfer may take, body included (an overall deadline, as curl's).")
    var maxTime: Double?
    @Option(help: ArgumentHelp("Give up when no connection is made within SECONDS (default 10).", valueName: "SECONDS"))
    var connectTimeout: Double?
    @Option(
        help: ArgumentHelp(
            "Connect to ADDR for requests to HOST on PORT, keeping HOST for Host, SNI and the certificate check "
                + "(curl's --resolve); repeatable.", valueName: "HOST:PORT:ADDR"))
    var resolve: [String] = []
    @Option(
        help: ArgumentHelp(
            "Connect to HOST2 on PORT2 for requests to HOST on PORT, keeping HOST for Host, SNI and the certificate "
                + "check; an empty part matches any (HOST, PORT) or keeps the request's (HOST2, PORT2) (curl's "
                + "--connect-to); repeatable, the first that matches is taken.", valueName: "HOST:PORT:HOST2:PORT2"))
    var connectTo: [String] = []
    @Option(
        help: ArgumentHelp(
            "Write every exchange to FILE as an HTTP Archive (HAR 1.2) as it completes, secrets redacted, for "
                + "--replay or a browser's tools.", valueName: "FILE"))
    var record: String?
    @Flag(
        help: ArgumentHelp(
            "Print the curl command that sends what this request would send (the session's cookies and credentials "
                + "included), and send nothing."))
    var curl = false
    @Option(
        help: ArgumentHelp(
            "Answer from the HAR file FILE (one --record wrote, or a browser exported) instead of the network; a "
                + "request it does not have fails.", valueName: "FILE"))
    var replay: String?
    @Option(
        help: ArgumentHelp(
            "Send the request to the Unix-domain socket at PATH, keeping the URL's host for Host (curl's).",
            valueName: "PATH"))
    var unixSocket: String?
    @Option(
        help: ArgumentHelp(
            "Send the request again up to N times after a 408, 429, 500, 502, 503 or 504 or a connection error (GET, "
                + "HEAD, PUT, DELETE, OPTIONS, TRACE), waiting 0.5 s, 1 s, … or what Retry-After asks; each retry is "
                + "reported on stderr.", valueName: "N"))
    var retry = 0
    @Option(help: "How many redirects --follow follows.")
    var maxRedirects = 30
    @Flag(name: [.customShort("F"), .long], help: "Follow redirects.")
    var follow = false
    @Flag(help: "Follow a redirect from https to plain http (refused by default: it would leave TLS).")
    var allowInsecureRedirects = false
    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Credentials, USER:PASSWORD (with --auth-type bearer: the token); -a USER alone asks for the password "
                + "on the terminal."))
    var auth: String?
    @Option(
        name: [.customShort("A"), .long],
        help: "basic (sent at once), digest (answers the server's challenge) or bearer (Authorization: Bearer TOKEN).")
    var authType: String = AuthOptions.Scheme.basic.rawValue
    @Flag(help: "Do not take credentials from ~/.netrc (or $NETRC) when none are given.")
    var ignoreNetrc = false
    @Flag(help: "Exit with 3, 4 or 5 for an unfollowed 3xx, a 4xx or a 5xx response.")
    var checkStatus = false

    @OptionGroup var tlsFlags: TLSFlags
    @OptionGroup var proxyFlag: ProxyFlag
    @Flag(help: "--http1: HTTP/1.1 only; --http2: HTTP/2 when the server offers it over TLS (the default).")
    var httpVersion: HTTPVersionChoice?

    @Option(
        help: ArgumentHelp(
            "Keep this request's custom headers, auth and cookies for the next ones: a session NAME per host, or a "
                + "PATH (with a /) to one file for every host.", valueName: "NAME|PATH"))
    var session: String?
    @Option(help: "Use a session's headers, auth and cookies without changing it.")
    var sessionReadOnly: String?

    @Option(
        name: [.customShort("b"), .long],
        help: ArgumentHelp(
            "Start the cookie jar with NAME=VALUE[; NAME2=VALUE2] (for the URL's host) or with the cookies of a "
                + "file in curl's format (a missing file is taken as empty).", valueName: "DATA|FILE"))
    var cookie: String?
    @Option(
        help: ArgumentHelp(
            "Write the cookie jar to FILE at the end, in curl's format (- for standard output).", valueName: "FILE"))
    var cookieJar: String?

    @Flag(help: .hidden)
    var forceProgress = false

    func run() async throws {
        let options = try makeOptions()
        let console = Console.standard(
            environment: ProcessInfo.processInfo.environment, forceProgress: forceProgress)
        let status = try await RequestRunner(options: options, console: console).run()
        if status != .success { throw CommandFailure(status, "") }
    }

    /// The options as plain values, checked.
    func makeOptions() throws -> RequestOptions {
        let modes = [(json, BodyMode.json), (form, .form), (multipart, .multipart)].filter(\.0).map(\.1)
        guard modes.count <= 1 else {
            throw CommandFailure(.failure, "choose one of --json, --form and --multipart")
        }
        guard let prettyMode = PrettyMode(rawValue: pretty) else {
            throw CommandFailure(.failure, "--pretty “\(pretty)”: use auto, all, colors, format or none")
        }
        guard let scheme = AuthOptions.Scheme(rawValue: authType.lowercased()) else {
            throw CommandFailure(.failure, "--auth-type “\(authType)”: use basic, digest or bearer")
        }
        let timeout = try timeout.map { try TimeLimit.checked($0, flag: "--timeout") }
        let maxTime = try maxTime.map { try TimeLimit.checked($0, flag: "--max-time") }
        let connectTimeout = try connectTimeout.map { try TimeLimit.checked($0, flag: "--connect-timeout") }
        let resolveRules = try resolve.map(ResolveRule.init)
        let connectToRules = try connectTo.map(ConnectToRule.init)
        if record != nil, replay != nil {
            throw CommandFailure(.failure, "--record and --replay: use one (a replay sends nothing to record)")
        }
        guard (0...100).contains(retry) else {
            throw CommandFailure(.failure, "--retry \(retry): use a number from 0 to 100")
        }
        guard maxRedirects >= 0 else {
            throw CommandFailure(.failure, "--max-redirects \(maxRedirects): the limit cannot be negative")
        }
        let isDownload = download || output != nil
        if resume, !isDownload {
            throw CommandFailure(.failure, "--continue resumes a download: add --download or --output FILE")
        }
        let tls = try tlsFlags.options()
        var plan = try RequestPlan(arguments: arguments, requestedMode: modes.first)
        let rawBody = try RawBody.resolve(
            raw: raw, file: plan.bodyFile, hasDataFields: plan.items.contains(where: \.isBodyField),
            ignoresInput: ignoreStdin, input: .current())
        if rawBody != nil, modes.first == .multipart {
            throw CommandFailure(.failure, "--multipart sends data fields and files: a whole body cannot be multipart")
        }
        if rawBody != nil, !plan.methodGiven { plan.method = "POST" }
        // --auth wins over credentials in the URL, as in curl and HTTPie.
        let credentials =
            try auth.map { try AuthOptions($0, scheme: scheme) }
            // A URL's user:password is Basic or Digest; a bearer token only comes from --auth.
            ?? plan.urlCredential.map { AuthOptions(credential: $0, scheme: scheme == .bearer ? .basic : scheme) }
        // The netrc file's, for the URL's host (HTTPie's default, curl's --netrc-optional), read only when nothing
        // here gives credentials; a session's stored ones still come first.
        let netrc =
            credentials != nil || ignoreNetrc
            ? nil
            : try URL(string: plan.url)?.host.flatMap {
                try Netrc.credential(for: $0, environment: ProcessInfo.processInfo.environment)
            }.map { AuthOptions(credential: $0, scheme: scheme == .bearer ? .basic : scheme) }
        return RequestOptions(
            plan: plan,
            print: try print.map(PrintOptions.init) ?? .defaults(verbose: verbose, offline: offline),
            pretty: prettyMode, offline: offline,
            download: isDownload ? SaveOptions(output: output, resume: resume) : nil,
            timeout: timeout, maxRedirects: maxRedirects, follow: follow,
            auth: credentials, checkStatus: checkStatus, tls: tls, maxTime: maxTime,
            allowsInsecureRedirects: allowInsecureRedirects, retries: retry, showsMetrics: verbose && !offline,
            httpVersion: httpVersion == .http1 ? .http1Only : .automatic, session: try sessionChoice(),
            proxy: try proxyFlag.settings(), cookie: cookie, cookieJar: cookieJar, connectTimeout: connectTimeout,
            resolve: resolveRules, connectTo: connectToRules, record: record, replay: replay, curl: curl,
            rawBody: rawBody,
            unixSocket: try unixSocket.map(UnixSocket.init),
            netrcAuth: netrc, meta: meta, writeOut: writeOut)
    }
}

extension RequestCommand {
    /// `--session` or `--session-read-only`, not both.
    func sessionChoice() throws -> (name: String, readOnly: Bool)? {
        switch (session, sessionReadOnly) {
        case (nil, nil): return nil
        case (let name?, nil): return (name, false)
        case (nil, let name?): return (name, true)
        case (.some, .some): throw CommandFailure(.failure, "choose one of --session and --session-read-only")
        }
    }
}

/// `--http1` or `--http2`.
enum HTTPVersionChoice: String, EnumerableFlag {
    case http1
    case http2
}

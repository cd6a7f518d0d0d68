import Courier
import CourierTesting
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one request as the options say and prints the exchange; returns the exit status.
struct RequestRunner {
    var options: RequestOptions
    var console: Console

    func run() async throws -> ExitStatus {
        let sessionFile = try options.session.map { session in
            try SessionFile.locate(
                name: session.name, for: URL(string: options.plan.url) ?? URL(fileURLWithPath: "/"),
                readOnly: session.readOnly, environment: ProcessInfo.processInfo.environment)
        }
        let stored = try sessionFile?.load() ?? StoredSession()
        let plan = options.plan
        let timeout = options.timeout
        // The session's credentials, unless this invocation gives its own.
        let auth =
            options.auth
            ?? stored.auth.map {
                AuthOptions(
                    credential: Credential(user: $0.username, password: $0.password),
                    scheme: AuthOptions.Scheme(rawValue: $0.type) ?? .basic)
            }
            ?? options.netrcAuth
        // Reading the files of name=@file items blocks: not on the cooperative pool.
        let rawBody = options.rawBody
        var prepared = try await BlockingIO.run {
            try RequestBuilder.build(plan, auth: auth, timeout: timeout, rawBody: rawBody)
        }
        if let socket = options.unixSocket, let url = prepared.urlRequest.url {
            guard let routed = socket.route(url) else {
                throw CommandFailure(.failure, "--unix-socket takes an http or https URL")
            }
            if prepared.urlRequest.value(forHTTPHeaderField: "Host") == nil {
                prepared.urlRequest.setValue(UnixSocket.hostField(of: url), forHTTPHeaderField: "Host")
            }
            prepared.urlRequest.url = routed
        }
        let cookies = try CommandCookies(
            session: stored, cookieOption: options.cookie, url: prepared.urlRequest.url)
        if sessionFile != nil { Self.apply(stored, to: &prepared.urlRequest, plan: plan, cookies: cookies) }
        if options.download != nil { Self.askForIdentityEncoding(&prepared.urlRequest, plan: plan) }
        if options.offline {
            try await printRequest(prepared, toStdout: true, cookies: cookies)
            try await console.flush()
            return .success
        }
        if options.curl {
            // What the session would send: its cookies, credentials and fields included; nothing is sent.
            var runner = self
            runner.options.auth = auth
            let manager = try runner.makeManager(monitors: [], cookies: cookies.jar)
            defer { manager.invalidate(cancelingTasks: true) }
            var request = prepared.urlRequest
            if request.httpBody == nil, let data = prepared.body?.data { request.httpBody = data }
            console.out(manager.cURLDescription(of: request) + "\n")
            try await console.flush()
            return .success
        }
        // Only a plain request waits silently for its head; uploads and downloads draw a progress bar instead.
        let spinner = options.download == nil && prepared.body == nil ? WaitingSpinner(console: console) : nil
        defer { spinner?.stop() }
        let metrics = options.showsMetrics ? MetricsPrinter(console: console) : nil
        let summary = options.meta || options.writeOut != nil ? TransferSummary() : nil
        let monitors: [any EventMonitor] =
            (spinner.map { [$0.monitor] } ?? []) + (metrics.map { [$0] } ?? []) + (summary.map { [$0] } ?? [])
        var runner = self
        runner.options.auth = auth
        let manager = try runner.makeManager(monitors: monitors, cookies: cookies.jar)
        defer { manager.invalidate(cancelingTasks: true) }
        let status: ExitStatus
        do {
            status = try await runner.transfer(prepared, manager: manager, spinner: spinner, cookies: cookies)
        } catch {
            await metrics?.waitUntilPrinted()
            // What the hops before the failure set is kept, as curl keeps it.
            try? saveCookies(cookies, session: sessionFile, stored: stored, plan: plan)
            throw error
        }
        await metrics?.waitUntilPrinted()
        if let summary, let done = await summary.waitUntilCompleted() {
            if options.meta { console.out(TransferSummary.meta(done.metrics)) }
            if let format = options.writeOut {
                let (text, unknown) = TransferSummary.writeOut(format, metrics: done.metrics, status: done.status)
                for name in unknown {
                    console.err(
                        "courier: warning: -w: unknown variable %{\(TerminalText.escape(name, keepingLineBreaks: false))}"
                            + "; known: \(TransferSummary.variables.joined(separator: ", "))\n")
                }
                console.out(text)
            }
        }
        try saveCookies(cookies, session: sessionFile, stored: stored, plan: plan)
        try await console.flush()  // `--cookie-jar -` wrote to standard output
        return status
    }

    /// Writes the session (its header fields, credentials and the jar's cookies) and `--cookie-jar`'s file.
    private func saveCookies(
        _ cookies: CommandCookies, session sessionFile: SessionFile?, stored: StoredSession, plan: RequestPlan
    ) throws {
        if let path = options.cookieJar { try cookies.save(toCookieFile: path, console: console) }
        guard let sessionFile else { return }
        let sent = plan.items.compactMap { item -> StoredSession.Header? in
            guard case .header(let value) = item.kind else { return nil }
            return StoredSession.Header(name: item.name, value: value)
        }
        let given = options.auth.map {
            StoredSession.Auth(type: $0.scheme.rawValue, username: $0.credential.user, password: $0.credential.password)
        }
        try sessionFile.save(stored.updated(sent: sent, auth: given, jar: cookies.jar), replacing: stored)
    }

    /// Adds a session's header fields (those this invocation does not set itself), and moves a `Cookie` field the
    /// invocation sets into the run's jar (HTTPie keeps such cookies in the session): the jar sends them together
    /// with the session's.
    static func apply(
        _ session: StoredSession, to request: inout URLRequest, plan: RequestPlan, cookies: CommandCookies
    ) {
        let named = Set(plan.items.map { $0.name.lowercased() })
        for header in session.headers where !named.contains(header.name.lowercased()) {
            request.setValue(header.value, forHTTPHeaderField: header.name)
        }
        if let url = request.url, let field = request.value(forHTTPHeaderField: "Cookie") {
            CommandCookies.addPairs(field, for: url, to: cookies.jar)
            request.setValue(nil, forHTTPHeaderField: "Cookie")
        }
    }

    /// Sends the request over `manager` and prints the exchange.
    private func transfer(
        _ prepared: PreparedRequest, manager: SessionManager, spinner: WaitingSpinner?, cookies: CommandCookies
    ) async throws -> ExitStatus {
        try await printRequest(prepared, toStdout: false, cookies: cookies)
        let request = prepared.urlRequest
        let limits = TransferLimits(
            timeout: options.timeout, maxTime: options.maxTime, maximumRedirects: options.maxRedirects)
        do {
            if let save = options.download {
                return try await FileDownload(
                    manager: manager, request: request, options: save, console: console, limits: limits,
                    printHead: { self.printResponseHead($0, version: $1) }
                ).run()
            }
            if let body = prepared.body {
                let bar = ProgressBar(console: console, label: "upload")
                // Streamed like any other response: a server may answer an upload with any size of body.
                let (response, task, version) = try await Upload.send(request, body: body, manager: manager, bar: bar)
                printResponseHead(response, version: version)
                if options.print.responseBody {
                    try await printer.print(
                        task.chunks, contentType: response.value(forHTTPHeaderField: "Content-Type"))
                } else {
                    task.cancel()
                }
                try await console.flush()
                return finalStatus(response)
            }
            let streamed = try await manager.stream(request, acceptableStatusCodes: nil)
            spinner?.stop()
            printResponseHead(streamed.response, version: streamed.task.httpVersion)
            if options.print.responseBody {
                try await printer.print(
                    streamed.chunks, contentType: streamed.response.value(forHTTPHeaderField: "Content-Type"))
            }
            try await console.flush()
            return finalStatus(streamed.response)
        } catch {
            throw CommandFailure(error: error, request: request, limits: limits)
        }
    }

    /// Asks for the body as stored (`Accept-Encoding: identity`) unless the user chose an encoding: a download's
    /// size and a resumed offset count the bytes on the wire, which a decompressed body would not match.
    static func askForIdentityEncoding(_ request: inout URLRequest, plan: RequestPlan) {
        let chosen = plan.items.contains { item in
            switch item.kind {
            case .header, .emptyHeader, .removeHeader: return item.name.lowercased() == "accept-encoding"
            default: return false
            }
        }
        if !chosen { request.setValue("identity", forHTTPHeaderField: "Accept-Encoding") }
    }

    private var printer: BodyPrinter { BodyPrinter(console: console, pretty: options.pretty) }

    /// A session for one request: the run's cookie jar (a new one unless given), the timeout and redirect limit of
    /// the options, redirects only with `--follow`, retries with `--retry`, the TLS options, and `monitors`
    /// watching it.
    func makeManager(monitors: [any EventMonitor] = [], cookies: CookieJar = CookieJar()) throws -> SessionManager {
        var configuration = SessionConfiguration.ephemeral
        configuration.cookieStore = cookies
        configuration.eventMonitors = monitors
        if options.retries > 0 {
            configuration.interceptor = RetryPolicy(retryLimit: options.retries)
            configuration.eventMonitors.append(RetryAnnouncer(console: console, limit: options.retries))
        }
        if let timeout = options.timeout { configuration.timeoutIntervalForRequest = timeout }
        if let maxTime = options.maxTime { configuration.timeoutIntervalForResource = maxTime }
        configuration.allowsInsecureRedirects = options.allowsInsecureRedirects
        configuration.maximumRedirects = options.maxRedirects
        configuration.httpVersion = options.httpVersion
        configuration.proxy = options.unixSocket == nil ? options.proxy : nil
        configuration.allowsUnixSocketURLs = options.unixSocket != nil
        if let auth = options.auth, auth.scheme == .digest {
            // Digest only: a server asking for Basic never gets the password in clear.
            var credential = auth.credential
            credential.schemes = [.digest]
            configuration.credential = credential
        }
        let manager = SessionManager(configuration: configuration, transport: try makeTransport())
        manager.responseSerializer = HTTPResponseSerializer(acceptableStatusCodes: nil)
        // The main queue is not serviced while the async entry point waits; callbacks run on a queue of their own.
        manager.completionQueue = DispatchQueue(label: "courier.completion")
        if !options.follow {
            var hooks = manager.hooks
            hooks.willPerformRedirection = { _, _, _ in nil }
            manager.hooks = hooks
        }
        try options.tls.apply(to: manager)
        return manager
    }

    /// The transport: a HAR file's for `--replay`; otherwise the network's, recorded for `--record`.
    ///
    /// - Throws: ``CommandFailure`` when the `--replay` file cannot be read.
    func makeTransport() throws -> any Transport {
        if let replay = options.replay {
            do {
                return try ReplayTransport(contentsOf: URL(fileURLWithPath: replay), strict: true)
            } catch {
                throw CommandFailure(
                    .failure, "--replay: \(TerminalText.escape(String(describing: error), keepingLineBreaks: false))")
            }
        }
        let network = networkTransport()
        guard let record = options.record else { return network }
        return RecordingTransport(wrapping: network, file: URL(fileURLWithPath: record))
    }

    /// The platform's transport, or, for `--connect-timeout`, `--resolve`, `--connect-to`, `--tls-min` and
    /// `--tls-max`, an ``NIOTransport`` set up for them.
    func networkTransport() -> any Transport {
        let url = URL(string: options.plan.url)
        let routes = options.connectTo.map(\.route)
        var addresses = ResolveRule.hostAddresses(options.resolve, for: url)
        // As in curl, --resolve also gives the address of a --connect-to target.
        if let target = url.flatMap({ NIOTransport.ConnectionRoute.target(of: $0, in: routes) }) {
            addresses.merge(ResolveRule.hostAddresses(options.resolve, host: target.host, port: target.port)) { $1 }
        }
        guard options.connectTimeout != nil || !addresses.isEmpty || !routes.isEmpty || options.tls.setsVersions
        else { return SessionManager.defaultTransport() }
        var configuration = NIOTransport.Configuration()
        if let connectTimeout = options.connectTimeout { configuration.connectTimeout = connectTimeout }
        configuration.hostAddresses = addresses
        configuration.connectionRoutes = routes
        options.tls.applyVersions(to: &configuration)
        return NIOTransport(configuration: configuration)
    }

    /// The exit status for the final response, and the `--check-status` warning.
    func finalStatus(_ response: HTTPURLResponse) -> ExitStatus {
        guard options.checkStatus else { return .success }
        let status = ExitStatus.checking(statusCode: response.statusCode)
        guard status != .success else { return .success }
        if status == .tooManyRedirects, options.follow { return .success }
        let reason = MessageFormatter.reason(response.statusCode)
        console.err("courier: warning: HTTP \(response.statusCode) \(reason)\n")
        return status
    }

    // MARK: Printing

    private var style: (stdout: Style, stderr: Style) {
        let out = options.pretty.colors(terminal: console.stdoutIsTerminal, allowed: console.colorAllowed)
        let err = options.pretty.colors(terminal: console.stderrIsTerminal, allowed: console.colorAllowed)
        return (Style(enabled: out), Style(enabled: err))
    }

    /// `H` and `B`: to standard output with `--offline` (it is the output), else to standard error.
    func printRequest(_ prepared: PreparedRequest, toStdout: Bool, cookies: CommandCookies? = nil) async throws {
        let print = options.print
        guard print.requestHead || print.requestBody else { return }
        var prepared = prepared
        // The cookies the jar adds as the request goes out.
        if prepared.urlRequest.value(forHTTPHeaderField: "Cookie") == nil, let url = prepared.urlRequest.url,
            let field = cookies?.field(for: url)
        {
            prepared.urlRequest.setValue(field, forHTTPHeaderField: "Cookie")
        }
        let terminal = toStdout ? console.stdoutIsTerminal : console.stderrIsTerminal
        let headStyle = toStdout ? style.stdout : style.stderr
        let write: (Data) -> Void = { toStdout ? console.out($0) : console.err(String(decoding: $0, as: UTF8.self)) }
        var body = prepared.urlRequest.httpBody
        if print.requestBody, body == nil, let streamed = prepared.body {
            var collected = Data()
            for try await chunk in try streamed.makeChunks() { collected.append(chunk) }
            body = collected
        }
        if print.requestHead {
            let length = prepared.body?.length ?? prepared.urlRequest.httpBody.map { Int64($0.count) }
            write(Data(MessageFormatter.requestHead(prepared.urlRequest, bodyLength: length, style: headStyle).utf8))
        }
        if print.requestBody, let body, !body.isEmpty {
            if print.requestHead { write(Data("\n".utf8)) }
            let shown = MessageFormatter.body(
                body, contentType: prepared.urlRequest.value(forHTTPHeaderField: "Content-Type"),
                pretty: options.pretty, console: console, toTerminal: terminal)
            write(shown)
            if shown.last != UInt8(ascii: "\n") { write(Data("\n".utf8)) }
        }
        if !toStdout, print.responseHead || print.responseBody { write(Data("\n".utf8)) }
    }

    /// `h`: the status line and headers, to standard error.
    func printResponseHead(_ response: HTTPURLResponse, version: String?) {
        guard options.print.responseHead else { return }
        console.err(MessageFormatter.responseHead(response, version: version, style: style.stderr) + "\n")
    }
}

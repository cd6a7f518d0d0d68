import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one request as the options say and prints the exchange; returns the exit status.
struct RequestRunner {
    var options: RequestOptions
    var console: Console

    func run() async throws -> ExitStatus {
        let prepared = try RequestBuilder.build(options.plan, auth: options.auth, timeout: options.timeout)
        if options.offline {
            try await printRequest(prepared, toStdout: true)
            return .success
        }
        let manager = try makeManager()
        defer { manager.invalidate(cancelingTasks: true) }
        try await printRequest(prepared, toStdout: false)
        let request = prepared.urlRequest
        do {
            if let save = options.download {
                return try await FileDownload(
                    manager: manager, request: request, options: save, console: console,
                    printHead: { self.printResponseHead($0) }
                ).run()
            }
            if let body = prepared.body {
                let bar = ProgressBar(console: console, label: "upload")
                let (response, data) = try await Upload.send(request, body: body, manager: manager, bar: bar)
                printResponseHead(response)
                if options.print.responseBody { printBody(data, response: response) }
                return finalStatus(response)
            }
            let streamed = try await manager.stream(request, acceptableStatusCodes: nil)
            printResponseHead(streamed.response)
            if options.print.responseBody {
                try await printBody(streamed)
            }
            return finalStatus(streamed.response)
        } catch {
            throw CommandFailure(
                error: error, request: request, timeout: options.timeout, maximumRedirects: options.maxRedirects)
        }
    }

    /// A session for one request: no cookies kept, the timeout and redirect limit of the options, redirects only
    /// with `--follow`, the TLS options.
    func makeManager() throws -> SessionManager {
        var configuration = SessionConfiguration.ephemeral
        if let timeout = options.timeout { configuration.timeoutIntervalForRequest = timeout }
        configuration.maximumRedirects = options.maxRedirects
        if let auth = options.auth, auth.scheme == .digest { configuration.credential = auth.credential }
        let manager = SessionManager(configuration: configuration)
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
    func printRequest(_ prepared: PreparedRequest, toStdout: Bool) async throws {
        let print = options.print
        guard print.requestHead || print.requestBody else { return }
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
    func printResponseHead(_ response: HTTPURLResponse) {
        guard options.print.responseHead else { return }
        console.err(MessageFormatter.responseHead(response, style: style.stderr) + "\n")
    }

    /// `b` for a body held in memory.
    func printBody(_ data: Data, response: HTTPURLResponse) {
        console.out(
            MessageFormatter.body(
                data, contentType: response.value(forHTTPHeaderField: "Content-Type"), pretty: options.pretty,
                console: console, toTerminal: console.stdoutIsTerminal))
    }

    /// `b` for a streamed body: copied to standard output as it arrives, unless it is to be formatted (then it is
    /// collected first, as formatting needs the whole document).
    func printBody(_ streamed: StreamedResponse) async throws {
        let terminal = console.stdoutIsTerminal
        let transforms =
            terminal || options.pretty.formats(terminal: terminal)
            || options.pretty.colors(terminal: terminal, allowed: console.colorAllowed)
        if !transforms {
            for try await chunk in streamed.chunks { console.out(chunk) }
            return
        }
        var data = Data()
        for try await chunk in streamed.chunks { data.append(chunk) }
        printBody(data, response: streamed.response)
    }
}

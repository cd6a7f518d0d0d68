import ArgumentParser
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `courier ws URL`: a WebSocket session on the terminal. Lines of standard input go out as text messages; each
/// message that arrives is printed on a line of its own.
struct WebSocketCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ws",
        abstract: "Send lines of standard input over a WebSocket and print the messages that arrive.",
        discussion: """
            Each line of standard input is sent as a text message; each message received is printed on its own line
            (text with control characters escaped, binary as base64, or hex with --hex). When standard input ends,
            messages are still received and printed; a normal close (1000) is sent once the server has been quiet
            for --wait seconds (default 1), or never with --no-close (the server closes, or Ctrl-C). The exit
            status is then 0. Any other close prints its code and reason on standard error and exits 1.
            """)

    @Argument(help: "A ws://, wss://, http:// or https:// URL (ws:// is assumed without a scheme).")
    var url: String

    @Option(
        name: [.customShort("H"), .long], help: "A header field for the upgrade request, \"Name: value\" (repeatable).")
    var header: [String] = []

    @Option(name: .customLong("protocol"), help: "A subprotocol to offer (repeatable).")
    var protocols: [String] = []

    @Flag(help: "Print binary messages in hex instead of base64.")
    var hex = false

    @Option(help: "The largest message accepted, in bytes (default 1 MiB).")
    var maxMessageSize: Int = 1 << 20

    @Option(
        help: ArgumentHelp(
            "After the end of input, close once the server has sent nothing for SECONDS (default 1).",
            valueName: "SECONDS"))
    var wait: Double = 1

    @Flag(name: [.customShort("n"), .long], help: "Do not close at the end of input: wait for the server to close.")
    var noClose = false

    @OptionGroup var tlsFlags: TLSFlags
    @OptionGroup var proxyFlag: ProxyFlag

    func validate() throws {
        guard (1...(1 << 30)).contains(maxMessageSize) else {
            throw ValidationError("--max-message-size must be between 1 and 1073741824")
        }
        guard wait.isFinite, wait >= 0, wait <= 86_400 else {
            throw ValidationError("--wait must be a number of seconds from 0 to 86400")
        }
    }

    func run() async throws {
        let console = Console.standard(environment: ProcessInfo.processInfo.environment, forceProgress: false)
        let request = try makeRequest()
        var configuration = SessionConfiguration.ephemeral
        configuration.proxy = try proxyFlag.settings()
        let tls = try tlsFlags.options()
        var transport = NIOTransport.Configuration()
        tls.applyVersions(to: &transport)
        let manager =
            tls.setsVersions
            ? SessionManager(configuration: configuration, transport: NIOTransport(configuration: transport))
            : SessionManager(configuration: configuration)
        defer { manager.invalidate(cancelingTasks: true) }
        try tls.apply(to: manager)
        let socket = manager.webSocketTask(with: request, protocols: protocols, maximumMessageSize: maxMessageSize)
        do {
            // Connected before standard input is read, so that an input that ends at once still reports a failure.
            try await socket.connect()
        } catch {
            throw CommandFailure(
                error: error, request: request, limits: TransferLimits(timeout: nil, maxTime: nil, maximumRedirects: 0))
        }
        // When a message last arrived (or input ended): the close waits for the server to go quiet, since a server
        // stops sending once it has a close (RFC 6455 §5.5.1) and answers to the last lines would be lost.
        let lastHeard = LockedValue(ContinuousClock.now)
        let (quiet, noClose) = (Duration.milliseconds(Int64(wait * 1000)), noClose)
        let sender = Task {
            while let line = try await BlockingIO.run({ readLine(strippingNewline: true) }) {
                try await socket.send(.string(line))
            }
            guard !noClose else { return }
            lastHeard.withLock { $0 = .now }
            while true {
                let deadline = lastHeard.withLock { $0 } + quiet
                if ContinuousClock.now >= deadline { break }
                try await Task.sleep(until: deadline, clock: .continuous)
            }
            await socket.cancel(with: .normalClosure)
        }
        defer { sender.cancel() }
        do {
            for try await message in socket.messages {
                lastHeard.withLock { $0 = .now }
                console.out(line(for: message))
                try await console.flush()
            }
        } catch let closed as WebSocketClosedError {
            try? await console.flush()
            let reason =
                closed.reason.isEmpty ? "" : ": " + TerminalText.escape(closed.reason, keepingLineBreaks: false)
            throw CommandFailure(.failure, "the WebSocket closed with \(closed.code.rawValue)\(reason)")
        } catch {
            try? await console.flush()
            throw CommandFailure(
                error: error, request: request, limits: TransferLimits(timeout: nil, maxTime: nil, maximumRedirects: 0))
        }
    }

    /// The upgrade request: the URL (ws:// added when there is no scheme) and the header fields.
    private func makeRequest() throws -> URLRequest {
        try StreamRequest.make(
            url: url.contains("://") ? url : "ws://" + url, original: url, schemes: ["ws", "wss", "http", "https"],
            headers: header)
    }

    /// One message as one line.
    private func line(for message: WebSocketMessage) -> String {
        switch message {
        case .string(let text):
            return TerminalText.escape(text, keepingLineBreaks: false) + "\n"
        case .data(let data):
            return (hex ? data.map { String(format: "%02x", $0) }.joined() : data.base64EncodedString()) + "\n"
        }
    }
}

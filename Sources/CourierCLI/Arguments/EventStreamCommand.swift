import ArgumentParser
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `courier sse URL [--json]`: prints a server-sent event stream's events as they arrive, reconnecting as a browser
/// does (``EventSource``).
struct EventStreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sse",
        abstract: "Print the server-sent events of a URL as they arrive, reconnecting as a browser does.",
        discussion: """
            Each event is printed as the stream sends it (its id and event lines when set, its data lines, then a
            blank line), or with --json as one JSON object per line: {"data": "…", "event": "message", "id": "3"}.
            After a dropped connection the stream waits its retry time (3 s unless the server sets another; never less
            than 100 ms, and doubling while connections end within a second) and reconnects with Last-Event-ID. A 204,
            another status or another Content-Type ends it with an error.
            """)

    @Argument(help: "The URL of the event stream (http:// is added when there is no scheme).")
    var url: String

    @Flag(help: "Print each event as one JSON object per line.")
    var json = false

    @Option(name: [.customShort("H"), .long], help: "A header field to send, as \"Name: value\" (repeatable).")
    var header: [String] = []

    @Option(help: "Stop after this many reconnections, whatever ended the connections (default: never).")
    var maxReconnects: Int?

    @OptionGroup var tlsFlags: TLSFlags
    @OptionGroup var proxyFlag: ProxyFlag

    func validate() throws {
        if let maxReconnects, !(0...1_000_000).contains(maxReconnects) {
            throw ValidationError("--max-reconnects must be between 0 and 1000000")
        }
    }

    func run() async throws {
        let console = Console.standard(environment: ProcessInfo.processInfo.environment, forceProgress: false)
        let request = try StreamRequest.make(
            url: try RequestPlan.expandURL(url), original: url, schemes: ["http", "https"], headers: header)
        var sessionConfiguration = SessionConfiguration.ephemeral
        sessionConfiguration.proxy = try proxyFlag.settings()
        let manager = SessionManager(configuration: sessionConfiguration)
        defer { manager.invalidate(cancelingTasks: true) }
        try tlsFlags.options().apply(to: manager)
        var configuration = EventSource.Configuration()
        configuration.maximumReconnectAttempts = maxReconnects
        do {
            for try await event in manager.eventStream(request, configuration: configuration) {
                console.out(json ? Self.jsonLine(event) : Self.block(event))
                try await console.flush()
            }
        } catch {
            try? await console.flush()
            throw CommandFailure(
                error: error, request: request, limits: TransferLimits(timeout: nil, maxTime: nil, maximumRedirects: 16)
            )
        }
    }

    /// The event as the stream had it: `id:` and `event:` when set, a `data:` line per line of data, a blank line.
    static func block(_ event: EventSource.Event) -> String {
        var text = ""
        if let id = event.id { text += "id: \(TerminalText.escape(id, keepingLineBreaks: false))\n" }
        if event.event != "message" { text += "event: \(TerminalText.escape(event.event, keepingLineBreaks: false))\n" }
        for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(TerminalText.escape(String(line), keepingLineBreaks: false))\n"
        }
        return text + "\n"
    }

    /// The event as one line of JSON; DEL, the C1 controls and the bidi controls, which JSON may leave raw, are
    /// escaped too (all are below U+10000, so `\uXXXX` holds them).
    static func jsonLine(_ event: EventSource.Event) -> String {
        let object: [String: Any] = ["id": event.id ?? NSNull(), "event": event.event, "data": event.data]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        var line = ""
        for scalar in String(decoding: data, as: UTF8.self).unicodeScalars {
            if scalar.value >= 0x7F, TerminalText.isControl(scalar) {
                line += String(format: "\\u%04x", scalar.value)
            } else {
                line.unicodeScalars.append(scalar)
            }
        }
        return line + "\n"
    }
}

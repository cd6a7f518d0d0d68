import Foundation
import NIOHTTP1

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes requests and responses as HTTP/1.1 text, as they go on the wire (headers sorted by name, since
/// Foundation keeps them in a dictionary).
enum MessageFormatter {
    /// The request line and headers, with `Host` first and a `Content-Length` for a body of known length.
    static func requestHead(_ request: URLRequest, bodyLength: Int64?, style: Style) -> String {
        let url = request.url
        var target = url?.path.isEmpty == false ? url?.path ?? "/" : "/"
        if let components = url.flatMap({ URLComponents(url: $0, resolvingAgainstBaseURL: false) }) {
            target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            if let query = components.percentEncodedQuery { target += "?" + query }
        }
        let method = request.httpMethod ?? "GET"
        var lines = [style.bold(style.green(method)) + " " + style.cyan(target) + " " + style.dim("HTTP/1.1")]
        if let host = url?.host {
            lines.append(header("Host", url?.port.map { "\(host):\($0)" } ?? host, style: style))
        }
        var fields = request.allHTTPHeaderFields ?? [:]
        if let bodyLength, fields.keys.allSatisfy({ $0.lowercased() != "content-length" }) {
            fields["Content-Length"] = String(bodyLength)
        }
        for (name, value) in fields.sorted(by: { $0.key.lowercased() < $1.key.lowercased() }) {
            lines.append(header(name, value, style: style))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The status line and headers. The server's header names and values have their control characters escaped
    /// (see ``TerminalText``): the head is a report on standard error, never the data.
    ///
    /// The status line names the version the response came with (`version`, `HTTP/1.1` when unknown); an HTTP/2
    /// one has no reason phrase, as on the wire (`HTTP/2 200`).
    static func responseHead(_ response: HTTPURLResponse, version: String?, style: Style) -> String {
        let code = response.statusCode
        let version = version ?? "HTTP/1.1"
        let status = version.hasPrefix("HTTP/2") || version.hasPrefix("HTTP/3") ? "\(code)" : "\(code) \(reason(code))"
        let coloured =
            switch code {
            case 200..<300: style.green(status)
            case 300..<400: style.yellow(status)
            default: style.red(status)
            }
        var lines = [style.dim(version) + " " + style.bold(coloured)]
        let fields = response.allHeaderFields.compactMap { key, value -> (String, String)? in
            guard let name = key as? String else { return nil }
            return (name, "\(value)")
        }
        for (name, value) in fields.sorted(by: { $0.0.lowercased() < $1.0.lowercased() }) {
            lines.append(
                header(
                    TerminalText.escape(name, keepingLineBreaks: false),
                    TerminalText.escape(value, keepingLineBreaks: false), style: style))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The reason phrase of a status code, e.g. `Not Found`.
    static func reason(_ code: Int) -> String {
        HTTPResponseStatus(statusCode: code).reasonPhrase
    }

    private static func header(_ name: String, _ value: String, style: Style) -> String {
        style.cyan(name) + ": " + value
    }

    /// A body held in memory (a request body) as it is printed: JSON formatted per `--pretty`, other text as it is
    /// (control characters escaped on a terminal), binary data replaced by a note on a terminal (where it would
    /// garble the screen).
    static func body(_ data: Data, contentType: String?, pretty: PrettyMode, console: Console, toTerminal: Bool)
        -> Data
    {
        let reformat = pretty.formats(terminal: toTerminal)
        let colour = pretty.colors(terminal: toTerminal, allowed: console.colorAllowed)
        if toTerminal, data.contains(0) || String(data: data, encoding: .utf8) == nil {
            return binaryNote
        }
        if reformat || colour, looksJSON(contentType: contentType, start: data),
            let text = JSONFormatter.format(
                data, reformat: reformat, style: Style(enabled: colour), escapingControls: toTerminal)
        {
            return Data((text.hasSuffix("\n") ? text : text + "\n").utf8)
        }
        guard toTerminal else { return data }
        var escaper = TerminalEscaper()
        return escaper.escape(data) + escaper.finish()
    }

    /// What is printed on a terminal instead of a binary body.
    static let binaryNote = Data(
        """
        +-----------------------------------------+
        | NOTE: binary data not shown in terminal |
        +-----------------------------------------+

        """.utf8)

    /// Whether a body is treated as JSON: its type says so, or, without a type, it starts with `{` or `[`.
    static func looksJSON(contentType: String?, start: Data) -> Bool {
        contentType.map { $0.lowercased().contains("json") }
            ?? start.first.map { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "[") } ?? false
    }
}

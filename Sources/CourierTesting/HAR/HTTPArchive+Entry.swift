import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Making an entry from an exchange, and the response an entry gives back.
extension HTTPArchive.Entry {
    /// What ``RecordingTransport`` saw of one exchange.
    struct Exchange {
        var request: StubbedRequest
        var statusCode: Int
        var httpVersion: String
        var headers: HTTPHeaderFields
        var body: Data
        var started: Date
        var headArrived: Date
        var ended: Date
        var serverAddress: String?
        var comment: String?
    }

    /// The entry for `exchange`, the values of the fields named in `redacting` (lower-cased) replaced, cookies
    /// included.
    init(_ exchange: Exchange, redacting: Set<String>) {
        func milliseconds(_ from: Date, _ to: Date) -> Double { max(0, (to.timeIntervalSince(from) * 1000).rounded()) }
        let version = HTTPArchive.harVersion(exchange.httpVersion)
        var request = HTTPArchive.Request(
            method: exchange.request.method, url: exchange.request.url.absoluteString, httpVersion: version)
        request.headers = HTTPArchive.fields(exchange.request.headers, redacting: redacting)
        request.cookies = HTTPArchive.requestCookies(exchange.request.headers, redacted: redacting.contains("cookie"))
        request.queryString =
            (URLComponents(url: exchange.request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map {
                HTTPArchive.NameValue(name: $0.name, value: $0.value ?? "")
            }
        request.bodySize = exchange.request.body.count
        if !exchange.request.body.isEmpty {
            let (text, encoding) = HTTPArchive.text(of: exchange.request.body)
            request.postData = HTTPArchive.PostData(
                mimeType: exchange.request.headers["Content-Type"] ?? "", text: text, encoding: encoding)
        }
        let (text, encoding) = HTTPArchive.text(of: exchange.body)
        var response = HTTPArchive.Response(
            status: exchange.statusCode,
            statusText: HTTPURLResponse.localizedString(forStatusCode: exchange.statusCode), httpVersion: version,
            content: HTTPArchive.Content(
                size: exchange.body.count, mimeType: exchange.headers["Content-Type"] ?? "", text: text,
                encoding: encoding))
        response.headers = HTTPArchive.fields(exchange.headers, redacting: redacting)
        response.cookies = HTTPArchive.responseCookies(exchange.headers, redacted: redacting.contains("set-cookie"))
        response.redirectURL = exchange.headers["Location"] ?? ""
        var timings = HTTPArchive.Timings()
        timings.wait = milliseconds(exchange.started, exchange.headArrived)
        timings.receive = milliseconds(exchange.headArrived, exchange.ended)
        self.init(
            startedDateTime: Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(exchange.started),
            time: timings.wait + timings.receive, request: request, response: response, timings: timings)
        serverIPAddress = exchange.serverAddress
        comment = exchange.comment
    }
}

extension HTTPArchive {
    /// What a redacted value becomes.
    static let redacted = "REDACTED"

    /// `HTTP/2` for `h2` and HTTP/2 in any spelling, `HTTP/1.1` for `http/1.1`: the form
    /// ``Courier/TransportResponse/httpVersion`` takes.
    static func courierVersion(_ version: String) -> String {
        let upper = version.uppercased()
        if upper == "H2" || upper.hasPrefix("HTTP/2") { return "HTTP/2" }
        if upper == "H3" || upper.hasPrefix("HTTP/3") { return "HTTP/3" }
        if upper.hasPrefix("HTTP/") { return upper }
        return "HTTP/1.1"
    }

    /// What a HAR file says for a version: `HTTP/2.0` for HTTP/2, as browsers write it.
    static func harVersion(_ version: String) -> String {
        version == "HTTP/2" ? "HTTP/2.0" : version
    }

    /// A body as HAR text: the UTF-8 text itself, or base64 (`encoding` `base64`) for other bytes.
    static func text(of body: Data) -> (text: String, encoding: String?) {
        if let text = String(data: body, encoding: .utf8) { return (text, nil) }
        return (body.base64EncodedString(), "base64")
    }

    static func fields(_ headers: HTTPHeaderFields, redacting: Set<String>) -> [NameValue] {
        headers.map { field in
            NameValue(name: field.name, value: redacting.contains(field.name.lowercased()) ? redacted : field.value)
        }
    }

    static func requestCookies(_ headers: HTTPHeaderFields, redacted hidden: Bool) -> [Cookie] {
        headers.values(for: "Cookie").flatMap { $0.split(separator: ";") }.compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { return nil }
            let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            return Cookie(name: name, value: hidden ? redacted : value)
        }
    }

    static func responseCookies(_ headers: HTTPHeaderFields, redacted hidden: Bool) -> [Cookie] {
        headers.values(for: "Set-Cookie").compactMap { line in
            let attributes = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = attributes.first, let equals = first.firstIndex(of: "=") else { return nil }
            var cookie = Cookie(
                name: String(first[..<equals]), value: hidden ? redacted : String(first[first.index(after: equals)...]))
            for attribute in attributes.dropFirst() {
                let parts = attribute.split(separator: "=", maxSplits: 1).map(String.init)
                switch parts.first?.lowercased() {
                case "path": cookie.path = parts.count > 1 ? parts[1] : nil
                case "domain": cookie.domain = parts.count > 1 ? parts[1] : nil
                case "httponly": cookie.httpOnly = true
                case "secure": cookie.secure = true
                default: break
                }
            }
            return cookie
        }
    }
}

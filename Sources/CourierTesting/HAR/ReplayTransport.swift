import Courier
import Foundation

/// A ``Transport`` that answers from an HTTP Archive (HAR 1.2): one ``RecordingTransport`` wrote, or one a
/// browser, Charles, Proxyman or mitmproxy exported. No server is needed.
///
/// ```swift
/// let replay = try ReplayTransport(contentsOf: URL(fileURLWithPath: "session.har"), strict: true)
/// let manager = HTTPSessionManager(baseURL: api, configuration: .ephemeral, transport: replay)
/// _ = try await manager.send("GET", "status", serializer: HTTPResponseSerializer())
/// try replay.verifyAllPlayed()
/// ```
///
/// A request is answered by the first entry not yet played with the same method and URL (query items in any order)
/// and, when `matchesBody`, the same body; entries with the same request play in the order the archive has them.
/// Once they are used up, the last one answers again, unless `strict`: then such a request fails, as does one no
/// entry has, and ``verifyAllPlayed()`` fails while any entry is left. Unmatched requests fail with
/// ``CourierError/requestFailed(underlyingError:context:)`` whose ``StubError`` names the nearest entries.
///
/// The response is the entry's status, header fields (in order; HTTP/2 pseudo-fields left out), version and body,
/// byte for byte. A browser's archive keeps bodies decoded, so a `Content-Encoding` field it lists is not acted on.
public final class ReplayTransport: Transport {
    private struct State: Sendable {
        var played: [Bool]
        var requests: [StubbedRequest] = []
    }

    /// The archive being played.
    public let archive: HTTPArchive
    private let matchesBody: Bool
    private let strict: Bool
    private let state: Guarded<State>

    /// Answers from `archive`.
    public init(archive: HTTPArchive, matchesBody: Bool = false, strict: Bool = false) {
        self.archive = archive
        self.matchesBody = matchesBody
        self.strict = strict
        state = Guarded(State(played: Array(repeating: false, count: archive.log.entries.count)))
    }

    /// Answers from the HAR file at `file`.
    ///
    /// - Throws: ``StubError`` when the file cannot be read or is not a HAR file.
    public convenience init(contentsOf file: URL, matchesBody: Bool = false, strict: Bool = false) throws {
        self.init(archive: try HTTPArchive(contentsOf: file), matchesBody: matchesBody, strict: strict)
    }

    /// Every request seen so far, in order, with its body.
    public var requests: [StubbedRequest] { state.current.requests }

    /// The entries no request has played yet.
    public var unplayedEntries: [HTTPArchive.Entry] {
        let played = state.current.played
        return archive.log.entries.indices.filter { !played[$0] }.map { archive.log.entries[$0] }
    }

    /// Throws unless every entry has been played.
    ///
    /// - Throws: ``StubError`` listing the entries left.
    public func verifyAllPlayed() throws {
        let left = unplayedEntries
        guard !left.isEmpty else { return }
        throw StubError(
            "\(left.count) recorded exchange\(left.count == 1 ? " was" : "s were") not played: "
                + left.prefix(5).map { "\($0.request.method) \($0.request.url)" }.joined(separator: ", "))
    }

    /// Answers `request` from the archive; see ``ReplayTransport``.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let fetchStart = Date()
        let seen = try await StubbedRequest.read(request)
        let entries = archive.log.entries
        let index = state.withLock { state -> Int? in
            state.requests.append(seen)
            let matching = entries.indices.filter { matches(entries[$0], seen) }
            if let next = matching.first(where: { !state.played[$0] }) {
                state.played[next] = true
                return next
            }
            return strict ? nil : matching.last
        }
        guard let index else { throw unmatched(seen) }
        return response(entries[index], for: seen, fetchStart: fetchStart)
    }

    /// Nothing to release.
    public func shutdown() async {}

    private func matches(_ entry: HTTPArchive.Entry, _ request: StubbedRequest) -> Bool {
        guard entry.request.method.uppercased() == request.method.uppercased(),
            let url = URL(string: entry.request.url), StubMatcher.sameURL(url, request.url)
        else { return false }
        return !matchesBody || (entry.request.postData?.data ?? Data()) == request.body
    }

    private func response(_ entry: HTTPArchive.Entry, for request: StubbedRequest, fetchStart: Date)
        -> TransportResponse
    {
        var headers = HTTPHeaderFields()
        for field in entry.response.headers where !field.name.hasPrefix(":") {
            headers.add(name: field.name, value: field.value)
        }
        let body = entry.response.content.data
        let version = HTTPArchive.courierVersion(entry.response.httpVersion)
        var response = TransportResponse(
            statusCode: entry.response.status, headers: headers, url: request.url, httpVersion: version,
            body: request.method.uppercased() == "HEAD" || body.isEmpty ? .empty : DataChunks(body))
        var metrics = TransactionMetrics(method: request.method, url: request.url)
        metrics.statusCode = entry.response.status
        metrics.fetchStartDate = fetchStart
        metrics.requestStartDate = fetchStart
        metrics.requestEndDate = fetchStart
        metrics.responseStartDate = Date()
        metrics.networkProtocolName = version == "HTTP/2" ? "h2" : version.lowercased()
        metrics.remoteAddress = entry.serverIPAddress
        metrics.countOfRequestBodyBytesSent = Int64(request.body.count)
        response.metrics = metrics
        return response
    }

    private func unmatched(_ request: StubbedRequest) -> CourierError {
        let entries = archive.log.entries
        let sameURL = entries.filter {
            URL(string: $0.request.url).map { StubMatcher.sameURL($0, request.url) } ?? false
        }
        var text = "no recorded exchange \(strict ? "left " : "")for \(request)"
        if !sameURL.isEmpty {
            text +=
                "; this URL was recorded with: "
                + Set(sameURL.map { $0.request.method }).sorted().joined(separator: ", ")
                + (matchesBody ? " (bodies are compared)" : "")
        } else {
            let near = entries.filter { URL(string: $0.request.url)?.host == request.url.host }.prefix(3)
            text +=
                near.isEmpty
                ? "; nothing was recorded for its host"
                : "; recorded for its host: "
                    + near.map { "\($0.request.method) \($0.request.url)" }.joined(separator: ", ")
        }
        return .requestFailed(underlyingError: StubError(text), context: CourierError.Context())
    }
}

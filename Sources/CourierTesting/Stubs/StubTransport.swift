import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Transport`` that answers from rules instead of a network, for testing code built on Courier without its
/// server: give it to a session (`HTTPSessionManager(baseURL:configuration:transport:)`), and every session feature
/// (redirects, retries and interceptors, cookies, downloads to files with progress, uploads and multipart,
/// server-sent events, WebSockets) runs over it as over a real transport.
///
/// ```swift
/// let stubs = StubTransport()
/// stubs.stub(.get("https://api.example.com/users/1"), with: .json(#"{"id":1,"name":"Ada"}"#))
/// stubs.stub(.post("/users"), with: [.status(503), .status(201)])  // fails once, then succeeds
/// let manager = HTTPSessionManager(
///     baseURL: URL(string: "https://api.example.com/"), configuration: .ephemeral, transport: stubs)
/// let user = try await manager.get("users/1", as: User.self).value
/// // After the code under test has run: what did it send?
/// let methods = stubs.requests.map(\.method)
/// ```
///
/// Rules are tried in the order they were added; the first that matches answers. A rule with several responses
/// gives them in turn, the last one again once they are used up. A request no rule matches fails with
/// ``CourierError/requestFailed(underlyingError:context:)`` whose ``StubError`` lists the closest rules and what
/// each did not match. Every request is recorded (``requests``), body included, matched or not.
public final class StubTransport: Transport {
    /// One rule: which requests, and what they get.
    struct Rule: Sendable {
        var matcher: StubMatcher
        var respond: @Sendable (StubbedRequest, Int) throws -> StubResponse
        var uses = 0
    }

    /// One WebSocket rule.
    struct WebSocketRule: Sendable {
        var matcher: StubMatcher
        var script: StubWebSocket.Script
    }

    private struct State: Sendable {
        var rules: [Rule] = []
        var webSockets: [WebSocketRule] = []
        var requests: [StubbedRequest] = []
        var isShutDown = false
    }

    private let state = Guarded(State())

    /// A transport with no rules yet.
    public init() {}

    /// Answers requests `matcher` matches with `response`.
    public func stub(_ matcher: StubMatcher, with response: StubResponse) {
        stub(matcher) { _ in response }
    }

    /// Answers requests `matcher` matches with `responses` in turn, the last one again once they are used up (e.g.
    /// `[.status(503), .status(200)]` to test a retry).
    public func stub(_ matcher: StubMatcher, with responses: [StubResponse]) {
        let responses = responses.isEmpty ? [StubResponse.status(200)] : responses
        add(Rule(matcher: matcher) { _, use in responses[min(use, responses.count - 1)] })
    }

    /// Answers requests `matcher` matches with what `respond` makes of each (its body included).
    ///
    /// - Parameter respond: may throw a ``CourierError`` to fail the exchange with it; any other error fails it
    ///   with ``CourierError/requestFailed(underlyingError:context:)``.
    public func stub(
        _ matcher: StubMatcher, respond: @escaping @Sendable (StubbedRequest) throws -> StubResponse
    ) {
        add(Rule(matcher: matcher) { request, _ in try respond(request) })
    }

    /// Opens WebSocket connections `matcher` matches with a peer that follows `script`.
    public func stubWebSocket(_ matcher: StubMatcher, script: StubWebSocket.Script) {
        state.withLock { $0.webSockets.append(WebSocketRule(matcher: matcher, script: script)) }
    }

    private func add(_ rule: Rule) {
        state.withLock { $0.rules.append(rule) }
    }

    /// Every request seen so far, in order, with its body.
    public var requests: [StubbedRequest] { state.current.requests }

    /// Removes the rules and the recorded requests.
    public func reset() {
        state.withLock { $0 = State() }
    }

    // MARK: Transport

    /// Answers `request` from the first rule that matches it; see ``StubTransport``.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let fetchStart = Date()
        let seen = try await StubbedRequest.read(request)
        let found = try state.withLock { state -> (Rule, Int)? in
            if state.isShutDown {
                throw CourierError.cancelled(context: CourierError.Context())
            }
            state.requests.append(seen)
            guard let index = state.rules.firstIndex(where: { $0.matcher.mismatches(seen).isEmpty }) else {
                return nil
            }
            defer { state.rules[index].uses += 1 }
            return (state.rules[index], state.rules[index].uses)
        }
        guard let (rule, use) = found else { throw unmatched(seen) }
        let response: StubResponse
        do {
            response = try rule.respond(seen, use)
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError.requestFailed(underlyingError: error, context: CourierError.Context())
        }
        return try await StubExchange.answer(seen, with: response, fetchStart: fetchStart)
    }

    /// Opens a scripted WebSocket for the first WebSocket rule that matches.
    public func openWebSocket(_ request: TransportRequest, configuration: WebSocketConfiguration) async throws
        -> any WebSocketConnection
    {
        let seen = StubbedRequest(method: request.method, url: request.url, headers: request.headers)
        let script = state.withLock { state -> StubWebSocket.Script? in
            state.requests.append(seen)
            return state.webSockets.first { $0.matcher.mismatches(seen).isEmpty }?.script
        }
        guard let script else { throw unmatched(seen, webSocket: true) }
        return StubWebSocket(url: request.url, script: script, configuration: configuration)
    }

    /// Ends the transport: later requests fail with ``CourierError/cancelled(context:)``.
    public func shutdown() async {
        state.withLock { $0.isShutDown = true }
    }

    /// The error for a request no rule matches, naming the closest rules.
    private func unmatched(_ request: StubbedRequest, webSocket: Bool = false) -> CourierError {
        let matchers = state.withLock { state in
            webSocket ? state.webSockets.map(\.matcher) : state.rules.map(\.matcher)
        }
        let ranked = matchers.map { ($0, $0.mismatches(request)) }.sorted { $0.1.count < $1.1.count }.prefix(3)
        var text = "no stubbed \(webSocket ? "WebSocket " : "")rule matches \(request)"
        if ranked.isEmpty {
            text += "; there are no rules"
        } else {
            text += "; the closest: "
            text += ranked.map { "\($0.0) (differs in \($0.1.joined(separator: ", ")))" }.joined(separator: "; ")
        }
        let url = request.url
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        return .requestFailed(underlyingError: StubError(text), context: CourierError.Context(request: urlRequest))
    }
}

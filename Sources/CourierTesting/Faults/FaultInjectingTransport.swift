import Courier
import Foundation

/// A ``Transport`` that sends through another (a real one, to a real server) and breaks some exchanges on
/// purpose, for testing an app's retry, resume and timeout handling.
///
/// ```swift
/// let faulty = FaultInjectingTransport(
///     wrapping: NIOTransport(),
///     faults: [
///         .failFirst(2, with: .connectionLost),  // the first two attempts fail
///         .dropConnection(afterBytes: 64 * 1024, matching: .get("/big")),  // then a download is cut once
///     ])
/// ```
///
/// Faults are checked in order for each request; every fault that matches applies. A fault with a `times` count
/// applies to that many matching requests, then no more.
public final class FaultInjectingTransport: Transport {
    /// One way to break an exchange.
    public struct Fault: Sendable {
        enum Kind: Sendable {
            case fail(StubResponse.Failure)
            case drop(afterBytes: Int)
            case stall(afterBytes: Int, duration: Duration)
            case slow(interval: Duration)
        }

        let kind: Kind
        /// The requests it applies to.
        public var matcher: StubMatcher
        /// How many matching requests it applies to; `nil`: all.
        public var times: Int?

        /// The first `count` matching requests fail with `failure` before anything is sent.
        public static func failFirst(
            _ count: Int, with failure: StubResponse.Failure = .connectionLost, matching matcher: StubMatcher = .any
        ) -> Fault {
            Fault(kind: .fail(failure), matcher: matcher, times: max(0, count))
        }

        /// The response body is cut after `count` bytes with a lost connection, `times` times (once by default).
        public static func dropConnection(afterBytes count: Int, matching matcher: StubMatcher = .any, times: Int? = 1)
            -> Fault
        {
            Fault(kind: .drop(afterBytes: max(0, count)), matcher: matcher, times: times)
        }

        /// The response body stops for `duration` after `count` bytes (so idle timeouts fire), `times` times.
        public static func stall(
            afterBytes count: Int, for duration: Duration, matching matcher: StubMatcher = .any, times: Int? = 1
        ) -> Fault {
            Fault(kind: .stall(afterBytes: max(0, count), duration: duration), matcher: matcher, times: times)
        }

        /// Every chunk of the response body waits `interval` first (a slow network).
        public static func slowChunks(every interval: Duration, matching matcher: StubMatcher = .any) -> Fault {
            Fault(kind: .slow(interval: interval), matcher: matcher, times: nil)
        }
    }

    private let inner: any Transport
    private let faults: [Fault]
    private let uses: Guarded<[Int]>
    private let seen = Guarded(0)

    /// Sends through `transport`, breaking exchanges as `faults` say.
    public init(wrapping transport: any Transport, faults: [Fault]) {
        inner = transport
        self.faults = faults
        uses = Guarded(Array(repeating: 0, count: faults.count))
    }

    /// How many requests have come through, failed ones included.
    public var requestCount: Int { seen.current }

    /// Sends `request`, applying the faults that match it.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        seen.withLock { $0 += 1 }
        // Matching needs the body only for a body pattern; reading it otherwise would consume a one-shot stream.
        let needsBody = faults.contains { $0.matcher.body != nil }
        let probe: StubbedRequest
        var outgoing = request
        if needsBody {
            probe = try await StubbedRequest.read(request)
            outgoing.body = request.body.map { _ in .data(probe.body) }
        } else {
            probe = StubbedRequest(method: request.method, url: request.url, headers: request.headers)
        }
        let active = uses.withLock { uses -> [Fault.Kind] in
            faults.indices.compactMap { index in
                let fault = faults[index]
                guard fault.matcher.mismatches(probe).isEmpty else { return nil }
                if let times = fault.times, uses[index] >= times { return nil }
                uses[index] += 1
                return fault.kind
            }
        }
        for kind in active {
            if case .fail(let failure) = kind {
                if case .noAnswer = failure {
                    while true { try await Task.sleep(for: .seconds(3600)) }
                }
                throw failure.error(for: request.url)
            }
        }
        var response = try await inner.send(outgoing)
        guard !active.isEmpty else { return response }
        let body = response.body
        let count = Guarded(0)
        response.body = DataChunks(makeNext: {
            var chunks = body.makeAsyncIterator()
            var lost = false
            return {
                if lost { throw StubResponse.Failure.connectionLost.error(for: request.url) }
                for kind in active { if case .slow(let interval) = kind { try await Task.sleep(for: interval) } }
                guard var chunk = try await chunks.next() else { return nil }
                let before = count.current
                for kind in active {
                    switch kind {
                    case .drop(let limit) where before + chunk.count > limit:
                        chunk = chunk.prefix(max(0, limit - before))
                        lost = true
                    case .stall(let limit, let duration) where before < limit && before + chunk.count >= limit:
                        // Deliver up to the limit first would need splitting the chunk; waiting before it is as good
                        // for a timeout.
                        try await Task.sleep(for: duration)
                    default: break
                    }
                }
                count.withLock { $0 += chunk.count }
                return chunk
            }
        })
        return response
    }

    /// Opens the WebSocket through the wrapped transport (faults apply to HTTP exchanges only).
    public func openWebSocket(_ request: TransportRequest, configuration: WebSocketConfiguration) async throws
        -> any WebSocketConnection
    {
        try await inner.openWebSocket(request, configuration: configuration)
    }

    /// Shuts the wrapped transport down.
    public func shutdown() async {
        await inner.shutdown()
    }
}

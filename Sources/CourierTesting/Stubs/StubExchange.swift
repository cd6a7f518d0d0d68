import Courier
import Foundation

/// Plays one ``StubResponse`` as a transport would: latency, then the head, then the body as it is pulled (with
/// its delays, and the connection lost where the response says), with metrics like a network exchange's.
enum StubExchange {
    static func answer(_ request: StubbedRequest, with response: StubResponse, fetchStart: Date) async throws
        -> TransportResponse
    {
        let url = request.url
        if response.latency > .zero { try await Task.sleep(for: response.latency) }
        if case .noAnswer? = response.failure {
            // Until cancelled: the session's timeout or the caller's cancel ends it.
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
        if let failure = response.failure { throw failure.error(for: url) }
        let requestStart = Date()
        var headers = response.headers
        let chunks: [Data]
        var interval = Duration.zero
        switch response.body {
        case .data(let data): chunks = data.isEmpty ? [] : [data]
        case .file(let file):
            do {
                chunks = [try Data(contentsOf: file)]
            } catch {
                throw CourierError.fileOperationFailed(
                    reason: "the stubbed body's file \(file.path) cannot be read", underlyingError: error,
                    context: CourierError.Context())
            }
        case .chunks(let list, let every):
            chunks = list
            interval = every
        }
        // Chunks stream as from a server that does not know the length; a whole body has one.
        if case .chunks = response.body {
        } else {
            headers = headers.adding("Content-Length", String(chunks.reduce(0) { $0 + $1.count }))
        }
        let isHead = request.method.uppercased() == "HEAD"
        let body = Self.body(
            isHead ? [] : chunks, interval: interval, losingAfter: response.connectionLostAfterBytes)
        var transport = TransportResponse(
            statusCode: response.statusCode, headers: headers, url: url, httpVersion: response.httpVersion,
            body: body)
        var metrics = TransactionMetrics(method: request.method, url: url)
        metrics.statusCode = response.statusCode
        metrics.fetchStartDate = fetchStart
        metrics.requestStartDate = requestStart
        metrics.requestEndDate = requestStart
        metrics.responseStartDate = Date()
        metrics.networkProtocolName = response.httpVersion == "HTTP/2" ? "h2" : "http/1.1"
        metrics.countOfRequestBodyBytesSent = Int64(request.body.count)
        transport.metrics = metrics
        return transport
    }

    /// The chunks, `interval` apart, failing with a lost connection after `limit` bytes when the body is longer.
    private static func body(_ chunks: [Data], interval: Duration, losingAfter limit: Int?) -> DataChunks {
        DataChunks(makeNext: {
            let pending = Guarded((chunks: chunks[...], sent: 0, lost: false))
            return {
                if pending.current.lost {
                    throw StubResponse.Failure.connectionLost.error(for: URL(fileURLWithPath: "/"))
                }
                if interval > .zero, !pending.current.chunks.isEmpty { try await Task.sleep(for: interval) }
                return pending.withLock { state -> Data? in
                    guard var chunk = state.chunks.first else { return nil }
                    state.chunks = state.chunks.dropFirst()
                    if let limit, state.sent + chunk.count > limit {
                        chunk = chunk.prefix(limit - state.sent)
                        state.lost = true
                    }
                    state.sent += chunk.count
                    return chunk
                }
            }
        })
    }
}

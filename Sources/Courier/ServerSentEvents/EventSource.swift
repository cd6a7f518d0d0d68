import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server-sent event stream: the events of a `text/event-stream` response as an `AsyncSequence`, reconnecting as
/// the WHATWG HTML standard's `EventSource` does.
///
/// ```swift
/// for try await event in manager.eventStream(URLRequest(url: url)) {
///     print(event.event, event.data)
/// }
/// ```
///
/// Each connection is a streamed data task of the session (``SessionManager/stream(_:acceptableStatusCodes:)``), so
/// the session's security policy, cookies, headers, interceptors and event monitors apply; the request goes out
/// with `Accept: text/event-stream`, `Cache-Control: no-cache` and, after the first event with an ID,
/// `Last-Event-ID`.
///
/// - **Reconnection.** When the connection ends or drops (also when it cannot be made, or the session's idle
///   timeout ends it), the stream waits the reconnection time (``Configuration/reconnectionTime``, 3 s, until a
///   `retry` field sets another) and connects again, sending the last event ID. An event the drop cut off is lost.
///   The wait is never shorter than 100 ms, whatever `retry` says, and it doubles (up to 30 s, or the reconnection
///   time when that is longer) for each connection in a row that could not be made or whose response ended within
///   a second: a server that sends `retry: 0` and ends every response at once cannot make the stream reconnect in a
///   tight loop.
///   ``Configuration/maximumReconnectAttempts`` bounds how many reconnections are made in all.
/// - **The end.** A `204`, any other status outside 200–299, or a `Content-Type` other than `text/event-stream`
///   ends the stream with ``CourierError/unacceptableStatusCode(_:context:underlyingError:)`` or
///   ``CourierError/unacceptableContentType(_:acceptable:context:)`` and no reconnection; so do errors that a
///   reconnection cannot mend (trust, an invalid URL, too many redirects) and an event longer than
///   ``Configuration/maximumEventSize``. Cancelling the iterating Swift task ends the stream (`next()` returns
///   `nil`) and cancels its request.
///
/// Iterate an `EventSource` once at a time: each iteration has its own connection.
public struct EventSource: AsyncSequence, Sendable {
    public typealias Element = EventSource.Event

    /// How the stream reconnects and what it accepts.
    public struct Configuration: Sendable {
        /// The wait before reconnecting until the stream sets another with `retry`; default 3 s.
        public var reconnectionTime: Duration = .seconds(3)
        /// The `Last-Event-ID` of the first connection (a stream resumed from an earlier one); default none.
        public var lastEventID: String = ""
        /// How many reconnections the stream makes (after the first connection) before it ends: every one counts,
        /// whether the connection failed, dropped, or the server ended the response, events or not. When the
        /// connection after the last one ends, the stream ends too: with that connection's failure, or (after a
        /// response the server ended) with `nil`. `nil` (the default) keeps reconnecting, as a browser does.
        public var maximumReconnectAttempts: Int?
        /// The most bytes one line or one event's data may take; default 1 MiB.
        public var maximumEventSize: Int = 1 << 20

        /// The default configuration.
        public init() {}
    }

    /// The shortest wait before a reconnection, whatever the stream's `retry` says.
    static let minimumReconnectionTime = Duration.milliseconds(100)
    /// A response that ends sooner than this after it arrived (or a connection that could not be made) counts as
    /// ending at once: the next wait doubles.
    static let quickEnd = Duration.seconds(1)
    /// The longest wait the doubling reaches (unless the reconnection time itself is longer).
    static let maximumBackoff = Duration.seconds(30)

    let manager: SessionManager
    let request: URLRequest
    let configuration: Configuration

    /// A stream of `request`'s events over `manager`'s session.
    public init(request: URLRequest, manager: SessionManager, configuration: Configuration = Configuration()) {
        self.request = request
        self.manager = manager
        self.configuration = configuration
    }

    /// Starts an iteration, which connects on its first `next()`.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self)
    }

    /// Iterates the events, connecting and reconnecting as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let source: EventSource
        private var parser: EventStreamParser
        /// The body of the current connection; `nil` between connections.
        private var body: ResponseChunks.AsyncIterator?
        /// Reconnections made so far (every connection after the first, which does not wait).
        private var reconnections = 0
        private var connectedBefore = false
        /// Connections in a row that could not be made or ended within ``EventSource/quickEnd`` of their response.
        private var quickEnds = 0
        /// When the current (or last) connection's response arrived; `nil` while connecting.
        private var respondedAt: ContinuousClock.Instant?
        private var finished = false

        init(source: EventSource) {
            self.source = source
            parser = EventStreamParser(
                lastEventID: source.configuration.lastEventID, maximumEventSize: source.configuration.maximumEventSize)
        }

        /// The next event; `nil` once the iterating task is cancelled.
        ///
        /// - Throws: ``CourierError`` when the stream ends for good (see ``EventSource``).
        public mutating func next() async throws -> EventSource.Event? {
            while !finished {
                if let event = try parsed() { return event }
                guard var current = body else {
                    try await connect()
                    continue
                }
                do {
                    if let chunk = try await current.next() {
                        body = current
                        parser.append(chunk)
                    } else {
                        try connectionEnded(failure: nil)  // the server ended the response: reconnect
                    }
                } catch {
                    if Task.isCancelled || Self.isCancellation(error) {
                        return finish()
                    }
                    guard Self.isRecoverable(error) else { throw end(with: error) }
                    try connectionEnded(failure: error)
                }
            }
            return nil
        }

        private mutating func parsed() throws -> EventSource.Event? {
            do {
                return try parser.nextEvent()
            } catch {
                throw end(with: error)
            }
        }

        /// Connects (after the reconnection wait, unless it is the first connection) and checks the response.
        private mutating func connect() async throws {
            if connectedBefore {
                reconnections += 1
                do {
                    try await Task.sleep(for: reconnectionWait)
                } catch {
                    _ = finish()
                    return
                }
            }
            connectedBefore = true
            respondedAt = nil
            do {
                body = try await open()
                respondedAt = .now
            } catch {
                if Task.isCancelled || Self.isCancellation(error) {
                    _ = finish()
                    return
                }
                guard Self.isRecoverable(error) else { throw end(with: error) }
                try connectionEnded(failure: error)
            }
        }

        /// The wait before the next reconnection: the reconnection time, at least
        /// ``EventSource/minimumReconnectionTime``, doubled for each connection in a row after the first that ended
        /// at once.
        private var reconnectionWait: Duration {
            let time = Swift.max(
                parser.reconnectionTime ?? source.configuration.reconnectionTime, EventSource.minimumReconnectionTime)
            // Past the cap, doubling changes nothing (and a `retry` near Int64's end must not overflow).
            guard quickEnds > 1, time < EventSource.maximumBackoff else { return time }
            return Swift.min(time * (1 << Swift.min(quickEnds - 1, 16)), EventSource.maximumBackoff)
        }

        /// The connection ended (the server ended the response, it dropped, or it could not be made): the stream
        /// reconnects, or ends when it has made all the reconnections it may (throwing `failure`, if any).
        private mutating func connectionEnded(failure: (any Error)?) throws {
            body = nil
            parser.restart()
            // Timed from the response, not the connection: a slow connect is no sign of a server that ends at once.
            let quick = respondedAt.map { ContinuousClock.now - $0 < EventSource.quickEnd } ?? true
            quickEnds = quick ? quickEnds + 1 : 0
            if let limit = source.configuration.maximumReconnectAttempts, reconnections >= limit {
                if let failure { throw end(with: failure) }
                _ = finish()
            }
        }

        /// Sends the request and returns its body, once the head says it is an event stream.
        private func open() async throws -> ResponseChunks.AsyncIterator {
            var request = source.request
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
            let id = parser.lastEventID
            // An ID is whatever the server sent; one a header cannot carry is not sent back.
            if !id.isEmpty, id.unicodeScalars.allSatisfy({ $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }) {
                request.setValue(id, forHTTPHeaderField: "Last-Event-ID")
            } else {
                request.setValue(nil, forHTTPHeaderField: "Last-Event-ID")
            }
            let streamed = try await source.manager.stream(request, acceptableStatusCodes: nil)
            let response = streamed.response
            let context = CourierError.Context(request: request, response: response)
            guard (200..<300).contains(response.statusCode), response.statusCode != 204 else {
                streamed.task.cancel()
                throw CourierError.unacceptableStatusCode(response.statusCode, context: context, underlyingError: nil)
            }
            let type = response.value(forHTTPHeaderField: "Content-Type")?.split(separator: ";").first
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard type == "text/event-stream" else {
                streamed.task.cancel()
                throw CourierError.unacceptableContentType(type, acceptable: ["text/event-stream"], context: context)
            }
            return streamed.chunks.makeAsyncIterator()
        }

        private mutating func finish() -> EventSource.Event? {
            finished = true
            body = nil
            return nil
        }

        private mutating func end(with error: any Error) -> any Error {
            finished = true
            body = nil
            return error
        }

        private static func isCancellation(_ error: any Error) -> Bool {
            if error is CancellationError { return true }
            if case .cancelled = error as? CourierError { return true }
            return false
        }

        /// Whether another connection may mend `error`: the network's failures, not the server's answers or the
        /// request's own faults.
        private static func isRecoverable(_ error: any Error) -> Bool {
            switch error as? CourierError {
            case .cannotConnect, .connectionLost, .timedOut, .badServerResponse: return true
            default: return false
            }
        }
    }
}

extension SessionManager {
    /// The server-sent events of `request`, reconnecting as ``EventSource`` describes.
    public func eventStream(
        _ request: URLRequest, configuration: EventSource.Configuration = EventSource.Configuration()
    ) -> EventSource {
        EventSource(request: request, manager: self, configuration: configuration)
    }
}

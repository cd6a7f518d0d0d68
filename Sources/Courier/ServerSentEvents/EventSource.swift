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
/// - **The end.** A `204`, any other status outside 200–299, or a `Content-Type` other than `text/event-stream`
///   ends the stream with ``CourierError/unacceptableStatusCode(_:context:underlyingError:)`` or
///   ``CourierError/unacceptableContentType(_:acceptable:context:)`` and no reconnection; so do errors that a
///   reconnection cannot mend (trust, an invalid URL, too many redirects) and an event longer than
///   ``Configuration/maximumEventSize``. Cancelling the iterating Swift task ends the stream (`next()` returns
///   `nil`) and cancels its request.
///
/// Iterate an `EventSource` once at a time: each iteration has its own connection.
public struct EventSource: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent

    /// How the stream reconnects and what it accepts.
    public struct Configuration: Sendable {
        /// The wait before reconnecting until the stream sets another with `retry`; default 3 s.
        public var reconnectionTime: Duration = .seconds(3)
        /// The `Last-Event-ID` of the first connection (a stream resumed from an earlier one); default none.
        public var lastEventID: String = ""
        /// How many reconnections in a row may fail (after the first attempt) before the stream ends with the
        /// last failure; `nil` (the default) keeps trying, as a browser does. An event resets the count.
        public var maximumReconnectAttempts: Int?
        /// The most bytes one line or one event's data may take; default 1 MiB.
        public var maximumEventSize: Int = 1 << 20

        /// The default configuration.
        public init() {}
    }

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
        /// Connection attempts since the last event; the first connection does not wait.
        private var attempts = 0
        private var connectedBefore = false
        private var finished = false

        init(source: EventSource) {
            self.source = source
            parser = EventStreamParser(
                lastEventID: source.configuration.lastEventID, maximumEventSize: source.configuration.maximumEventSize)
        }

        /// The next event; `nil` once the iterating task is cancelled.
        ///
        /// - Throws: ``CourierError`` when the stream ends for good (see ``EventSource``).
        public mutating func next() async throws -> ServerSentEvent? {
            while !finished {
                if let event = try parsed() {
                    attempts = 0
                    return event
                }
                guard var current = body else {
                    try await connect()
                    continue
                }
                do {
                    if let chunk = try await current.next() {
                        body = current
                        parser.append(chunk)
                    } else {
                        dropConnection()  // the server ended the response: reconnect
                    }
                } catch {
                    if Task.isCancelled || Self.isCancellation(error) {
                        return finish()
                    }
                    guard Self.isRecoverable(error) else { throw end(with: error) }
                    dropConnection()
                }
            }
            return nil
        }

        private mutating func parsed() throws -> ServerSentEvent? {
            do {
                return try parser.nextEvent()
            } catch {
                throw end(with: error)
            }
        }

        /// Connects (after the reconnection time, unless it is the first connection) and checks the response.
        private mutating func connect() async throws {
            if connectedBefore {
                do {
                    try await Task.sleep(for: parser.reconnectionTime ?? source.configuration.reconnectionTime)
                } catch {
                    _ = finish()
                    return
                }
            }
            connectedBefore = true
            attempts += 1
            do {
                body = try await open()
            } catch {
                if Task.isCancelled || Self.isCancellation(error) {
                    _ = finish()
                    return
                }
                let limit = source.configuration.maximumReconnectAttempts
                guard Self.isRecoverable(error), limit.map({ attempts <= $0 }) ?? true else { throw end(with: error) }
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

        private mutating func dropConnection() {
            body = nil
            parser.restart()
        }

        private mutating func finish() -> ServerSentEvent? {
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

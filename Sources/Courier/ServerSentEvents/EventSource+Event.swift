import Foundation

extension EventSource {
    /// One event of a `text/event-stream` body (the WHATWG HTML standard's server-sent events).
    public struct Event: Sendable, Hashable {
        /// The last event ID when the event was dispatched: set by an `id` field of this event or an earlier one;
        /// `nil` while none has been set (or after an empty `id`).
        public var id: String?
        /// The event type: the `event` field, `message` when there was none.
        public var event: String
        /// The `data` fields' values, joined with LF.
        public var data: String
        /// The reconnection time a `retry` field of this event set, if any.
        public var retry: Duration?

        /// Creates an event.
        public init(id: String? = nil, event: String = "message", data: String, retry: Duration? = nil) {
            self.id = id
            self.event = event
            self.data = data
            self.retry = retry
        }
    }
}

import Foundation

/// Turns the bytes of a `text/event-stream` body into ``EventSource/Event``s, by the WHATWG HTML standard's
/// event-stream rules, whatever the chunk boundaries.
///
/// - A UTF-8 byte order mark at the start of a stream is dropped; invalid UTF-8 becomes U+FFFD.
/// - Lines end at CRLF, LF or CR. A line starting with `:` is a comment. A line is split at its first `:` into field
///   and value (one space after the colon is removed); a line without one is a field with an empty value.
/// - `data` values are joined with LF; `event` sets the type (`message` when none); `id` sets the last event ID
///   unless the value contains NUL, and it is kept for later events; `retry` sets ``reconnectionTime`` when the
///   value is all ASCII digits; other fields are ignored.
/// - A blank line dispatches the event. An event without data is not dispatched (its `id` still counts), and an
///   event the stream ends inside of is dropped.
///
/// A stream is hostile until checked: a line or an event's data longer than ``maximumEventSize`` bytes fails with
/// ``CourierError/responseSerializationFailed(reason:context:underlyingError:)`` rather than grow without end.
public struct EventStreamParser: Sendable {
    /// The ID of the last event dispatched (empty for none): what a reconnection sends as `Last-Event-ID`.
    public private(set) var lastEventID: String
    /// The reconnection time the stream asked for with its last valid `retry` field; `nil` when it has not.
    public private(set) var reconnectionTime: Duration?
    /// The most bytes one line or one event's data may take.
    public let maximumEventSize: Int

    private var lines = LineSplitter()
    private var idBuffer: String
    private var data = ""
    private var dataBytes = 0
    private var eventType = ""
    private var retryInEvent: Duration?
    /// The first bytes of a stream, held until they can be told from a byte order mark.
    private var head: [UInt8]? = []

    /// A parser for a new stream; `lastEventID` is the ID an earlier connection ended with.
    public init(lastEventID: String = "", maximumEventSize: Int = 1 << 20) {
        self.lastEventID = lastEventID
        self.idBuffer = lastEventID
        self.maximumEventSize = max(1, maximumEventSize)
    }

    /// Adds the next bytes of the stream; take the events they complete with ``nextEvent()``.
    public mutating func append(_ chunk: Data) {
        guard var held = head else { return lines.append(chunk) }
        held.append(contentsOf: chunk)
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        if held.count < mark.count, Array(mark.prefix(held.count)) == held {
            head = held  // could still be a byte order mark
            return
        }
        head = nil
        lines.append(Data(held.starts(with: mark) ? held.dropFirst(mark.count) : held[...]))
    }

    /// The next event the bytes so far complete, or `nil` when they complete none.
    ///
    /// - Throws: ``CourierError`` when a line or an event is longer than ``maximumEventSize``.
    public mutating func nextEvent() throws -> EventSource.Event? {
        while let line = lines.nextLine() {
            try checkSize(line.count)
            if let event = try process(line) { return event }
        }
        try checkSize(lines.pendingCount)
        return nil
    }

    /// Starts over for a new connection: an event in progress is dropped; the last event ID and the reconnection
    /// time are kept.
    public mutating func restart() {
        let time = reconnectionTime
        self = EventStreamParser(lastEventID: lastEventID, maximumEventSize: maximumEventSize)
        reconnectionTime = time
    }

    private mutating func process(_ line: ArraySlice<UInt8>) throws -> EventSource.Event? {
        let colon = UInt8(ascii: ":")
        if line.isEmpty { return dispatch() }
        if line.first == colon { return nil }
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let index = line.firstIndex(of: colon) {
            field = line[..<index]
            value = line[(index + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            (field, value) = (line, [])
        }
        switch String(decoding: field, as: UTF8.self) {
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "data":
            dataBytes += value.count + 1
            try checkSize(dataBytes)
            data += String(decoding: value, as: UTF8.self)
            data += "\n"
        case "id":
            if !value.contains(0) { idBuffer = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }) {
                // Digits past Int64's range are a very long time, not a trap.
                let milliseconds = Int64(String(decoding: value, as: UTF8.self)) ?? .max
                let time = Duration.milliseconds(min(milliseconds, Int64.max / 1_000_000))
                reconnectionTime = time
                retryInEvent = time
            }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> EventSource.Event? {
        lastEventID = idBuffer
        defer {
            (data, dataBytes, eventType, retryInEvent) = ("", 0, "", nil)
        }
        guard !data.isEmpty else { return nil }
        data.removeLast()  // the LF after the last data line
        return EventSource.Event(
            id: lastEventID.isEmpty ? nil : lastEventID, event: eventType.isEmpty ? "message" : eventType, data: data,
            retry: retryInEvent)
    }

    private func checkSize(_ count: Int) throws {
        guard count > maximumEventSize else { return }
        throw CourierError.responseSerializationFailed(
            reason: "An event of the stream is longer than \(maximumEventSize) bytes.", context: CourierError.Context(),
            underlyingError: nil)
    }
}

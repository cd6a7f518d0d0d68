import Foundation
import Testing

@testable import Courier

/// ``EventStreamParser`` against the WHATWG event-stream rules, one row per rule, and the same events whatever the
/// chunk boundaries.
@Suite struct EventStreamParserTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let rule: String
        let stream: String
        let events: [EventSource.Event]
        var testDescription: String { rule }
    }

    static let rows: [Row] = [
        Row(
            rule: "a blank line dispatches; event defaults to message", stream: "data: hi\n\n",
            events: [.init(data: "hi")]),
        Row(
            rule: "data lines are joined with LF", stream: "data: a\ndata: b\ndata:\n\n",
            events: [.init(data: "a\nb\n")]),
        Row(
            rule: "one space after the colon is removed, not two", stream: "data:  two\ndata:none\n\n",
            events: [.init(data: " two\nnone")]),
        Row(
            rule: "CRLF, LF and CR all end lines", stream: "data: a\r\ndata: b\rdata: c\n\r\n",
            events: [.init(data: "a\nb\nc")]),
        Row(
            rule: "lines starting with a colon are comments", stream: ": hello\ndata: x\n: bye\n\n",
            events: [.init(data: "x")]),
        Row(
            rule: "event sets the type", stream: "event: update\ndata: 1\n\ndata: 2\n\n",
            events: [.init(event: "update", data: "1"), .init(data: "2")]),
        Row(
            rule: "id is kept across events", stream: "id: 7\ndata: a\n\ndata: b\n\n",
            events: [.init(id: "7", data: "a"), .init(id: "7", data: "b")]),
        Row(
            rule: "an empty id clears it", stream: "id: 7\ndata: a\n\nid\ndata: b\n\n",
            events: [.init(id: "7", data: "a"), .init(id: nil, data: "b")]),
        Row(
            rule: "an id with NUL is ignored", stream: "id: 1\ndata: a\n\nid: 2\u{0}x\ndata: b\n\n",
            events: [.init(id: "1", data: "a"), .init(id: "1", data: "b")]),
        Row(
            rule: "an event without data is not dispatched but its id counts",
            stream: "id: 5\nevent: ping\n\ndata: after\n\n", events: [.init(id: "5", data: "after")]),
        Row(
            rule: "retry only when all ASCII digits", stream: "retry: 1500\ndata: a\n\nretry: 2s\ndata: b\n\n",
            events: [.init(data: "a", retry: .milliseconds(1500)), .init(data: "b")]),
        Row(rule: "a field without a colon has an empty value", stream: "data\ndata\n\n", events: [.init(data: "\n")]),
        Row(rule: "unknown fields are ignored", stream: "foo: bar\ndata: x\n\n", events: [.init(data: "x")]),
        Row(rule: "a leading BOM is stripped", stream: "\u{FEFF}data: bom\n\n", events: [.init(data: "bom")]),
        Row(rule: "only one leading BOM is stripped", stream: "\u{FEFF}\u{FEFF}data: x\n\n", events: []),
        Row(
            rule: "an unterminated last event is dropped", stream: "data: done\n\ndata: cut",
            events: [.init(data: "done")]),
        Row(rule: "an event without its blank line is dropped", stream: "data: a\ndata: b\n", events: []),
        Row(rule: "field names are case-sensitive", stream: "Data: x\ndata: y\n\n", events: [.init(data: "y")]),
        Row(rule: "UTF-8 text survives", stream: "data: héllo ✓\n\n", events: [.init(data: "héllo ✓")]),
    ]

    static func parse(_ chunks: [Data]) throws -> [EventSource.Event] {
        var parser = EventStreamParser()
        var events: [EventSource.Event] = []
        for chunk in chunks {
            parser.append(chunk)
            while let event = try parser.nextEvent() { events.append(event) }
        }
        return events
    }

    @Test(arguments: rows)
    func rule(_ row: Row) throws {
        #expect(try Self.parse([Data(row.stream.utf8)]) == row.events)
    }

    @Test("Every row gives the same events split at every byte, and byte by byte")
    func chunkBoundaries() async throws {
        for row in Self.rows {
            let bytes = Data(row.stream.utf8)
            for cut in 0...bytes.count {
                let events = try Self.parse([bytes.prefix(cut), bytes.dropFirst(cut)].map { Data($0) })
                #expect(events == row.events, "\(row.rule), split at \(cut)")
            }
            #expect(try Self.parse(bytes.map { Data([$0]) }) == row.events, "\(row.rule), byte by byte")
            await Task.yield()
        }
    }

    @Test("Invalid UTF-8 becomes U+FFFD")
    func invalidUTF8() throws {
        let events = try Self.parse([Data("data: a".utf8) + Data([0xFF]) + Data("b\n\n".utf8)])
        #expect(events == [.init(data: "a\u{FFFD}b")])
    }

    @Test("A line longer than the limit fails instead of growing")
    func sizeLimit() throws {
        var parser = EventStreamParser(maximumEventSize: 1024)
        parser.append(Data(repeating: UInt8(ascii: "a"), count: 2000))
        #expect(throws: CourierError.self) { try parser.nextEvent() }
        var data = EventStreamParser(maximumEventSize: 1024)
        for _ in 0..<100 { data.append(Data("data: 0123456789abcdef\n".utf8)) }
        #expect(throws: CourierError.self) { while try data.nextEvent() != nil {} }
    }

    @Test("A restart drops the event in progress and keeps the last ID and the reconnection time")
    func restart() throws {
        var parser = EventStreamParser()
        parser.append(Data("retry: 250\nid: 3\ndata: three\n\nid: 4\ndata: cut".utf8))
        #expect(try parser.nextEvent() == .init(id: "3", data: "three", retry: .milliseconds(250)))
        #expect(try parser.nextEvent() == nil)
        parser.restart()
        #expect(parser.lastEventID == "3")
        #expect(parser.reconnectionTime == .milliseconds(250))
        parser.append(Data("\n\ndata: next\n\n".utf8))
        #expect(try parser.nextEvent() == .init(id: "3", data: "next"))
    }

    @Test("LineSplitter: CR at a chunk's end and LF at the next one's start are one break")
    func lineSplitter() {
        var splitter = LineSplitter()
        var lines: [String] = []
        for chunk in ["a\r", "\nb\r", "c\n", "\r\n", "tail"] {
            splitter.append(Data(chunk.utf8))
            while let line = splitter.nextLine() { lines.append(String(decoding: line, as: UTF8.self)) }
        }
        #expect(lines == ["a", "b", "c", ""])
        #expect(splitter.remainder().map { String(decoding: $0, as: UTF8.self) } == "tail")
        #expect(splitter.remainder() == nil)
    }
}

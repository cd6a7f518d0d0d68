import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``HTTPHeaderFields`` and the heads made from it, at the sizes a hostile server can send.
@Suite("HTTP headers")
struct HTTPHeaderFieldsTests {
    static let count = 10_000

    static var distinct: [HTTPHeaderFields.Field] {
        (0..<count).map { HTTPHeaderFields.Field(name: "X-Field-\($0)", value: "value-\($0)") }
    }

    @Test(
        "10,000 distinct fields: built, set, read, removed and made into an HTTPURLResponse in linear time", .cpuBound)
    func tenThousandDistinctFields() throws {
        // The body is synchronous, so one thread runs all of it: its CPU time is the work's, however loaded the
        // machine (under the whole suite on a slow machine the wall time was ten times the CPU time).
        let start = Self.threadCPUTime()
        var headers = HTTPHeaderFields(Self.distinct)
        #expect(headers.fields.count == Self.count)
        for index in 0..<Self.count {
            #expect(headers["x-field-\(index)"] == "value-\(index)")
        }
        // Setting an existing name (any case) replaces it in place; a new one is appended.
        for index in stride(from: 0, to: Self.count, by: 2) { headers["X-FIELD-\(index)"] = "again-\(index)" }
        headers["X-New"] = "new"
        #expect(headers.fields.count == Self.count + 1)
        #expect(headers.fields[0] == HTTPHeaderFields.Field(name: "X-FIELD-0", value: "again-0"))
        #expect(headers["x-field-1"] == "value-1")
        #expect(headers.fields.last?.name == "X-New")
        #expect(headers.values(for: "x-field-4") == ["again-4"])
        #expect(headers.values(for: "absent").isEmpty)
        // Removing moves the fields behind; lookups still find them.
        headers["x-field-5000"] = nil
        #expect(headers["X-Field-5000"] == nil)
        #expect(headers["X-Field-5001"] == "value-5001")
        #expect(headers.fields.count == Self.count)
        let head = ResponseHead(
            statusCode: 200, headers: headers, url: try #require(URL(string: "http://127.0.0.1/")))
        let response = try #require(head.response)
        #expect(response.value(forHTTPHeaderField: "x-field-9999") == "value-9999")
        #expect(head.value(forHTTPHeaderField: "X-Field-2") == "again-2")
        #expect(headers.dictionary.count == Self.count)
        let elapsed = Self.threadCPUTime() - start
        // Linear work here is a few milliseconds, and the checks around it well under a second of a debug build's
        // CPU. The scans this replaces compared every name with every other (50 million comparisons per pass), which
        // took tens of seconds.
        #expect(elapsed < .seconds(5), "took \(elapsed) of CPU")
    }

    /// The CPU time the calling thread has used.
    static func threadCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
    }

    @Test("Repeated names keep every field and join them for Foundation, across the indexed size")
    func repeatedNames() throws {
        for size in [4, 40] {
            var headers = HTTPHeaderFields()
            for index in 0..<size { headers.add(name: index % 2 == 0 ? "Set-Cookie" : "x-\(index)", value: "\(index)") }
            let cookies = stride(from: 0, to: size, by: 2).map(String.init)
            #expect(headers.values(for: "set-cookie") == cookies)
            #expect(headers["SET-COOKIE"] == "0", "the first of repeated fields")
            let head = ResponseHead(statusCode: 200, headers: headers, url: try #require(URL(string: "http://h/")))
            #expect(head.response?.value(forHTTPHeaderField: "Set-Cookie") == cookies.joined(separator: ", "))
            headers["set-cookie"] = nil  // the first one only
            #expect(headers.values(for: "Set-Cookie") == Array(cookies.dropFirst()))
        }
    }

    @Test("Equal lists are equal and hash alike, however they were built")
    func equality() {
        let fields = Self.distinct.prefix(30)
        var built = HTTPHeaderFields()
        for field in fields { built.add(name: field.name, value: field.value) }
        let made = HTTPHeaderFields(fields)
        #expect(built == made)
        #expect(built.hashValue == made.hashValue)
        var changed = made
        changed["X-Field-3"] = "other"
        #expect(changed != made)
    }
}

import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Serializers' head-based entry: the same results as the Foundation entry, Foundation's `HTTPURLResponse` made
/// only for an error, and a serializer written against Foundation alone still served by a session.
@Suite struct ResponseHeadSerializationTests {
    /// A head with these fields in order, repeated names kept (as a transport delivers them).
    static func head(_ status: Int, _ fields: [(String, String)]) -> ResponseHead {
        var headers = HTTPHeaderFields()
        for (name, value) in fields { headers.add(name: name, value: value) }
        return ResponseHead(statusCode: status, headers: headers, url: ResponseFixtures.url)
    }

    @Test func anAcceptedResponseIsParsedWithoutMakingAnHTTPURLResponse() throws {
        let head = Self.head(200, [("content-type", "application/json; charset=utf-8")])
        let json = try JSONResponseSerializer().serialize(head: head, data: Data(#"{"id":9007199254740993}"#.utf8))
        #expect(json?["id"]?.intValue == 9_007_199_254_740_993)
        #expect(!head.hasMadeResponse)
        struct Item: Decodable, Sendable { let id: Int }
        let item = try DecodableResponseSerializer(Item.self).serialize(head: head, data: Data(#"{"id":3}"#.utf8))
        #expect(item.id == 3)
        #expect(!head.hasMadeResponse)
    }

    @Test func anErrorCarriesTheResponseMadeFromTheHead() async throws {
        let head = Self.head(422, [("Content-Type", "application/json")])
        let error = try #require(
            await thrownCourierError {
                try JSONResponseSerializer().serialize(head: head, data: Data(#"{"error":"x"}"#.utf8))
            })
        #expect(error.errorCode == -1011)
        #expect(error.response?.statusCode == 422)
        #expect(error.response === head.response)  // made once, shared by every copy of the head
        #expect((error.serializedObject as? JSON)?["error"]?.stringValue == "x")
    }

    @Test func headAndFoundationEntriesAgree() throws {
        let cases: [(Int, String?, String)] = [
            (200, "application/json", "[1,2]"), (200, "text/html", "<p>"), (500, "application/json", "{}"),
            (204, nil, ""), (200, "APPLICATION/JSON; charset=UTF-8", "true"), (404, "text/plain", "nope"),
        ]
        for (status, contentType, body) in cases {
            let fields = contentType.map { [("Content-Type", $0)] } ?? []
            let data = Data(body.utf8)
            let viaHead = Result { try JSONResponseSerializer().serialize(head: Self.head(status, fields), data: data) }
            let viaResponse = Result {
                try JSONResponseSerializer().serialize(
                    response: ResponseFixtures.response(status, contentType: contentType), data: data)
            }
            switch (viaHead, viaResponse) {
            case (.success(let a), .success(let b)): #expect(a == b)
            case (.failure(let a as CourierError), .failure(let b as CourierError)):
                #expect(a.errorCode == b.errorCode)
                #expect(a.response?.statusCode == b.response?.statusCode)
            default: Issue.record("\(status) \(contentType ?? "-"): \(viaHead) vs \(viaResponse)")
            }
        }
    }

    @Test func repeatedFieldsReadAsFoundationJoinsThem() {
        let head = Self.head(200, [("Vary", "Accept"), ("vary", "Origin"), ("X-One", "1")])
        #expect(head.value(forHTTPHeaderField: "VARY") == "Accept, Origin")
        #expect(head.value(forHTTPHeaderField: "x-one") == "1")
        #expect(head.value(forHTTPHeaderField: "Missing") == nil)
        #expect(head.response?.value(forHTTPHeaderField: "Vary") == "Accept, Origin")
    }

    /// A serializer that implements only Foundation's entry, as one written for AFNetworking would.
    struct FoundationOnlySerializer: ResponseSerializer {
        func serialize(response: HTTPURLResponse?, data: Data?) throws -> String {
            "\(response?.statusCode ?? 0) \(response?.value(forHTTPHeaderField: "Content-Type") ?? "-")"
        }
    }

    @Test(arguments: TestTransports.names)
    func aSerializerWithOnlyTheFoundationEntryStillWorks(transport name: String) async throws {
        let body = "{}"
        let server = try await FaultServer.start(
            .respond(
                Data(
                    ("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8), close: false))
        let manager = HTTPSessionManager(
            baseURL: server.baseURL, configuration: .ephemeral, transport: TestTransports.make(name))
        let response = try await manager.send("GET", "x", serializer: FoundationOnlySerializer())
        #expect(response.value == "201 application/json")
        await manager.invalidateAndWait(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }

    /// Records the Swift task it serializes on.
    struct TaskRecordingSerializer: ResponseSerializer {
        let seen = Locked<Int?>(nil)
        func serialize(response: HTTPURLResponse?, data: Data?) throws -> Int {
            let current = withUnsafeCurrentTask { $0?.hashValue }
            seen.withLock { $0 = current }
            return response?.statusCode ?? 0
        }
    }

    @Test(
        "An async call that nobody watches serializes on the caller's own task, with no hop",
        arguments: TestTransports.names)
    func asyncCallsSerializeOnTheCallersTask(transport name: String) async throws {
        let server = try await FaultServer.start(
            .respond(Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), close: false))
        let manager = HTTPSessionManager(
            baseURL: server.baseURL, configuration: .ephemeral, transport: TestTransports.make(name))
        let serializer = TaskRecordingSerializer()
        let caller = withUnsafeCurrentTask { $0?.hashValue }
        let response = try await manager.send("GET", "x", serializer: serializer)
        #expect(response.value == 200)
        #expect(caller != nil)
        #expect(serializer.seen.withLock { $0 } == caller)
        await manager.invalidateAndWait(cancelingTasks: true)
        await manager.transport.shutdown()
        try await server.stop()
    }
}

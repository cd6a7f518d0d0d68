import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct XMLParserResponseSerializerTests {
    private typealias F = ResponseFixtures

    private func xml(_ text: String, status: Int = 200, contentType: String? = "application/xml") throws -> XML? {
        try XMLParserResponseSerializer().serialize(
            response: F.response(status, contentType: contentType), data: F.data(text))
    }

    @Test func defaults() {
        let serializer = XMLParserResponseSerializer()
        #expect(serializer.acceptableContentTypes == ["application/xml", "text/xml"])
        #expect(XMLParserResponseSerializer.xmlContentTypes == ["application/xml", "text/xml"])
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
    }

    @Test(arguments: ["application/xml", "text/xml", "text/xml; charset=utf-8", "Application/XML"])
    func acceptsXMLContentTypes(contentType: String) throws {
        let root = try #require(try xml("<root/>", contentType: contentType))
        #expect(root.name == "root")
    }

    @Test func returnsTheElementTree() throws {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <feed version="2" lang="en">
              <title>News &amp; Views</title>
              <entry id="1"><name>First</name></entry>
              <entry id="2"><name>Second</name><body><![CDATA[<b>bold</b> & raw]]></body></entry>
            </feed>
            """
        let feed = try #require(try xml(body))
        #expect(feed.name == "feed")
        #expect(feed.attributes == ["version": "2", "lang": "en"])
        #expect(feed.children.map(\.name) == ["title", "entry", "entry"])
        #expect(feed["title"]?.text == "News & Views")
        let entries = feed.children(named: "entry")
        #expect(entries.map { $0.attributes["id"] } == ["1", "2"])
        #expect(entries[0]["name"]?.text == "First")
        #expect(entries[1]["body"]?.text == "<b>bold</b> & raw")
        #expect(feed["missing"] == nil)
    }

    @Test func nilResponseParsesWithoutValidation() throws {
        let root = try XMLParserResponseSerializer().serialize(response: nil, data: F.data("<a>1</a>"))
        #expect(root == XML(name: "a", text: "1"))
    }

    @Test(arguments: [
        "<foo", "<foo>", "<a><b></a>", "<a>x</a>junk", "<a>&bogus;</a>", "not xml", "<a/><b/>", "\n", "  ",
    ])
    func malformedXMLIsASerializationError(body: String) throws {
        let data = F.data(body)
        let error = try #require(throws: CourierError.self) {
            try XMLParserResponseSerializer().serialize(response: F.response(contentType: "text/xml"), data: data)
        }
        guard case .responseSerializationFailed(_, let context, let underlying) = error else {
            Issue.record("expected responseSerializationFailed, got \(error)")
            return
        }
        #expect(error.errorCode == -1016)
        #expect(underlying is XMLParsingError)
        #expect(context.data == data)
    }

    @Test func emptyBodyGivesNil() throws {
        let serializer = XMLParserResponseSerializer()
        #expect(try serializer.serialize(response: F.response(contentType: "application/xml"), data: Data()) == nil)
        #expect(try serializer.serialize(response: F.response(contentType: "application/xml"), data: nil) == nil)
        #expect(
            try serializer.serialize(response: F.response(contentType: "application/xml"), data: F.data(" ")) == nil)
    }

    @Test func unacceptableContentTypeIsThrownWithoutParsing() throws {
        let error = try #require(throws: CourierError.self) { try xml("<a/>", contentType: "application/json") }
        guard case .unacceptableContentType("application/json", _, _) = error else {
            Issue.record("expected unacceptableContentType, got \(error)")
            return
        }
        #expect(error.serializedObject == nil)
    }

    @Test func statusErrorCarriesTheParsedTree() throws {
        let error = try #require(throws: CourierError.self) { try xml("<error code=\"E1\">bad</error>", status: 400) }
        #expect(error.errorCode == -1011)
        #expect(error.errorDescription == "Request failed: bad request (400)")
        #expect(error.serializedObject as? XML == XML(name: "error", attributes: ["code": "E1"], text: "bad"))
    }

    @Test func malformedXMLUnderErrorStatusHasParseErrorUnderneath() throws {
        let error = try #require(throws: CourierError.self) { try xml("<error>", status: 502) }
        #expect(error.errorCode == -1011)
        let parseError = try #require(error.underlyingError as? CourierError)
        #expect(parseError.errorCode == -1016)
        #expect(parseError.underlyingError is XMLParsingError)
    }
}

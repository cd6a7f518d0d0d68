#if canImport(FoundationXML) || os(macOS)
    import Foundation
    import Testing

    @testable import Courier

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif
    #if canImport(FoundationXML)
        import FoundationXML
    #endif

    @Suite struct XMLDocumentResponseSerializerTests {
        private typealias F = ResponseFixtures

        private func document(_ text: String, status: Int = 200, contentType: String? = "text/xml") throws
            -> WellFormedXMLDocument?
        {
            try XMLDocumentResponseSerializer()
                .serialize(response: F.response(status, contentType: contentType), data: F.data(text))
        }

        @Test func defaults() {
            let serializer = XMLDocumentResponseSerializer()
            #expect(serializer.acceptableContentTypes == ["application/xml", "text/xml"])
            #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
            #expect(serializer.options == [])
        }

        @Test func wellFormedDocumentMakesADocument() throws {
            let body = #"<?xml version="1.0"?><catalog count="2"><item>a</item><item>b</item></catalog>"#
            let wellFormed = try #require(try document(body))
            #expect(wellFormed.data == F.data(body))
            let xml = try wellFormed.makeDocument()
            let root = try #require(xml.rootElement())
            #expect(root.name == "catalog")
            #expect(root.attribute(forName: "count")?.stringValue == "2")
            #expect(root.elements(forName: "item").map(\.stringValue) == ["a", "b"])
        }

        @Test func eachCallMakesANewDocument() throws {
            let wellFormed = try #require(try document("<a/>", contentType: "application/xml"))
            let first = try wellFormed.makeDocument()
            let second = try wellFormed.makeDocument()
            #expect(first !== second)
            first.rootElement()?.name = "changed"
            #expect(second.rootElement()?.name == "a")
        }

        @Test(arguments: ["<foo", "<foo>", "<a><b></a>", "<a>x</a>junk", "not xml", "\n"])
        func malformedDocumentIsASerializationError(body: String) throws {
            let error = try #require(throws: CourierError.self) { try document(body) }
            guard case .responseSerializationFailed(_, _, let underlying) = error else {
                Issue.record("expected responseSerializationFailed, got \(error)")
                return
            }
            #expect(error.errorCode == -1016)
            #expect(underlying != nil)
        }

        @Test func emptyBodyGivesNil() throws {
            let serializer = XMLDocumentResponseSerializer()
            #expect(try serializer.serialize(response: F.response(contentType: "text/xml"), data: Data()) == nil)
            #expect(try serializer.serialize(response: F.response(contentType: "text/xml"), data: nil) == nil)
            #expect(try serializer.serialize(response: nil, data: F.data(" ")) == nil)
        }

        @Test func unacceptableContentTypeIsRejected() throws {
            let error = try #require(throws: CourierError.self) { try document("<a/>", contentType: "text/html") }
            #expect(error.errorCode == -1016)
            #expect(error.errorDescription == "Request failed: unacceptable content-type: text/html")
        }

        @Test func statusErrorCarriesTheDocument() throws {
            let error = try #require(throws: CourierError.self) { try document("<error>x</error>", status: 500) }
            #expect(error.errorCode == -1011)
            let wellFormed = try #require(error.serializedObject as? WellFormedXMLDocument)
            #expect(try wellFormed.makeDocument().rootElement()?.name == "error")
        }
    }
#endif

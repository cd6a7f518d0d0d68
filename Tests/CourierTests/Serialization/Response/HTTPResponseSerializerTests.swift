import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct HTTPResponseSerializerTests {
    private typealias F = ResponseFixtures

    // MARK: Defaults

    @Test func defaultsAcceptSuccessfulStatusCodesAndAnyContentType() {
        let serializer = HTTPResponseSerializer()
        #expect(serializer.acceptableStatusCodes == IndexSet(integersIn: 200..<300))
        #expect(serializer.acceptableContentTypes == nil)
        #expect(IndexSet.successfulStatusCodes == IndexSet(integersIn: 200..<300))
    }

    @Test func nilResponseIsAlwaysValid() throws {
        let serializer = HTTPResponseSerializer(acceptableStatusCodes: [200], acceptableContentTypes: ["a/b"])
        let data = F.data("anything")
        #expect(serializer.validationError(response: nil, data: data) == nil)
        #expect(serializer.validationError(response: nil, data: nil) == nil)
        #expect(try serializer.serialize(response: nil, data: data) == data)
    }

    @Test(arguments: [200, 201, 204, 205, 250, 299])
    func successfulStatusCodesAreValid(status: Int) throws {
        let data = F.data("body")
        let result = try HTTPResponseSerializer().serialize(response: F.response(status), data: data)
        #expect(result == data)
    }

    @Test(arguments: [100, 101, 199, 300, 301, 304, 399, 400, 404, 418, 500, 503, 600, 699])
    func otherStatusCodesAreInvalidByDefault(status: Int) throws {
        let error = try #require(throws: CourierError.self) {
            try HTTPResponseSerializer().serialize(response: F.response(status), data: F.data("body"))
        }
        #expect(error.errorCode == -1011)
        guard case .unacceptableStatusCode(let code, _, let underlying) = error else {
            Issue.record("expected unacceptableStatusCode, got \(error)")
            return
        }
        #expect(code == status)
        #expect(underlying == nil)
    }

    @Test func nilAcceptableStatusCodesDisablesTheStatusCheck() throws {
        let serializer = HTTPResponseSerializer(acceptableStatusCodes: nil)
        for status in [100, 304, 404, 500, 600] {
            #expect(serializer.validationError(response: F.response(status), data: F.data("x")) == nil)
        }
    }

    @Test func customAcceptableStatusCodesReplaceTheDefault() {
        let serializer = HTTPResponseSerializer(acceptableStatusCodes: [304, 404])
        #expect(serializer.validationError(response: F.response(304), data: nil) == nil)
        #expect(serializer.validationError(response: F.response(404), data: F.data("x")) == nil)
        #expect(serializer.validationError(response: F.response(200), data: nil)?.errorCode == -1011)
    }

    @Test func nilAcceptableContentTypesAcceptsAnyTypeAndNone() {
        let serializer = HTTPResponseSerializer()
        for type in ["text/html", "application/octet-stream", "x/y; a=b", nil] as [String?] {
            #expect(serializer.validationError(response: F.response(contentType: type), data: F.data("x")) == nil)
        }
    }

    // MARK: Content types

    @Test(arguments: [
        "application/json",
        "Application/JSON; charset=UTF-8",
        "APPLICATION/JSON",
        "application/json;charset=utf-8",
        "application/json ; charset=\"utf-8\"",
        "  application/json  ",
    ])
    func mimeTypeIgnoresParametersAndCase(contentType: String) {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let response = F.response(contentType: contentType)
        #expect(response.contentType?.mimeType == "application/json")
        #expect(serializer.validationError(response: response, data: F.data("{}")) == nil)
    }

    @Test func acceptableContentTypesAreComparedCaseInsensitively() {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["Application/JSON", "text/plain"])
        #expect(
            serializer.validationError(response: F.response(contentType: "application/json"), data: F.data("1")) == nil)
        #expect(serializer.validationError(response: F.response(contentType: "TEXT/PLAIN"), data: F.data("1")) == nil)
        #expect(
            serializer.validationError(response: F.response(contentType: "text/html"), data: F.data("1"))?.errorCode
                == -1016)
    }

    @Test func headerNameIsCaseInsensitive() {
        let response = F.response(headers: ["content-type": "Text/HTML; Charset=ISO-8859-1"])
        #expect(response.contentType?.mimeType == "text/html")
        #expect(response.contentType?.charset == "iso-8859-1")
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["text/html"])
        #expect(serializer.validationError(response: response, data: F.data("<p>")) == nil)
    }

    @Test func unacceptableContentTypeWithBodyIsAnError() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let response = F.response(contentType: "text/html; charset=utf-8")
        let data = F.data("<html></html>")
        let error = try #require(throws: CourierError.self) { try serializer.serialize(response: response, data: data) }
        guard case .unacceptableContentType(let mime, let acceptable, let context) = error else {
            Issue.record("expected unacceptableContentType, got \(error)")
            return
        }
        #expect(mime == "text/html")
        #expect(acceptable == ["application/json"])
        #expect(context.response === response)
        #expect(context.data == data)
        #expect(error.errorCode == -1016)
        #expect(error.errorDescription == "Request failed: unacceptable content-type: text/html")
        #expect(error.response === response)
        #expect(error.responseData == data)
        #expect(error.underlyingError == nil)
        #expect(error.serializedObject == nil)
    }

    @Test func missingContentTypeWithBodyIsDescribedAsNull() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let error = try #require(throws: CourierError.self) {
            try serializer.serialize(response: F.response(), data: F.data("x"))
        }
        guard case .unacceptableContentType(let mime, _, _) = error else {
            Issue.record("expected unacceptableContentType, got \(error)")
            return
        }
        #expect(mime == nil)
        #expect(error.errorDescription == "Request failed: unacceptable content-type: (null)")
    }

    @Test func contentTypeWithoutMimeTypeCountsAsMissing() throws {
        let response = F.response(contentType: "; charset=utf-8")
        #expect(response.contentType == nil)
        let error = HTTPResponseSerializer(acceptableContentTypes: ["text/plain"])
            .validationError(response: response, data: F.data("x"))
        #expect(error?.errorDescription == "Request failed: unacceptable content-type: (null)")
    }

    @Test func unacceptableContentTypeWithEmptyBodyIsNotAnError() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        #expect(serializer.validationError(response: F.response(contentType: "text/html"), data: Data()) == nil)
        #expect(serializer.validationError(response: F.response(contentType: "text/html"), data: nil) == nil)
        #expect(serializer.validationError(response: F.response(), data: nil) == nil)
        #expect(try serializer.serialize(response: F.response(contentType: "text/html"), data: Data()) == Data())
        #expect(try serializer.serialize(response: F.response(contentType: "text/html"), data: nil) == nil)
    }

    @Test func emptyAcceptableContentTypesRejectsEveryBody() {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: [])
        let error = serializer.validationError(response: F.response(contentType: "text/plain"), data: F.data("x"))
        #expect(error?.errorCode == -1016)
        #expect(serializer.validationError(response: F.response(contentType: "text/plain"), data: Data()) == nil)
    }

    // MARK: AFNetworking's 205 cases

    @Test func status205WithoutContentTypeOrDataIsValid() {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["text/html"])
        #expect(serializer.validationError(response: F.response(205), data: nil) == nil)
        #expect(serializer.validationError(response: F.response(205), data: Data()) == nil)
    }

    @Test func status205WithoutContentTypeButWithDataIsInvalid() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["text/html"])
        let data = F.data("test")
        let error = try #require(serializer.validationError(response: F.response(205), data: data))
        #expect(error.errorCode == -1016)
        #expect(error.responseData == data)
        #expect(throws: CourierError.self) { try serializer.validate(response: F.response(205), data: data) }
    }

    // MARK: Status codes

    @Test(arguments: [
        (404, "Request failed: not found (404)"),
        (500, "Request failed: internal server error (500)"),
        (418, "Request failed: client error (418)"),
        (600, "Request failed: server error (600)"),
        (650, "Request failed: server error (650)"),
        (304, "Request failed: not modified (304)"),
        (399, "Request failed: redirected (399)"),
        (100, "Request failed: continue (100)"),
        (103, "Request failed: informational (103)"),
        (401, "Request failed: unauthorized (401)"),
        (403, "Request failed: forbidden (403)"),
        (422, "Request failed: client error (422)"),
        (503, "Request failed: service unavailable (503)"),
        (204, "Request failed: no content (204)"),
        (226, "Request failed: success (226)"),
    ])
    func statusErrorDescription(status: Int, description: String) throws {
        let serializer = HTTPResponseSerializer(acceptableStatusCodes: [999])
        let error = try #require(serializer.validationError(response: F.response(status), data: nil))
        #expect(error.errorCode == -1011)
        #expect(error.errorDescription == description)
        #expect(error.localizedDescription == description)
    }

    @Test func statusErrorCarriesResponseAndData() throws {
        let response = F.response(404, contentType: "text/plain")
        let data = F.data("missing")
        let error = try #require(throws: CourierError.self) {
            try HTTPResponseSerializer().serialize(response: response, data: data)
        }
        #expect(error.response === response)
        #expect(error.responseData == data)
        #expect(error.response?.statusCode == 404)
        #expect(error.underlyingError == nil)
    }

    @Test func statusErrorWithEmptyBodyCarriesNoData() throws {
        let error = try #require(HTTPResponseSerializer().validationError(response: F.response(500), data: nil))
        #expect(error.responseData == nil)
        #expect(error.response?.statusCode == 500)
    }

    @Test func contentTypeErrorBecomesUnderlyingErrorOfStatusError() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let data = F.data("<html>oops</html>")
        let error = try #require(
            serializer.validationError(response: F.response(404, contentType: "text/html"), data: data))
        guard case .unacceptableStatusCode(404, _, let underlying?) = error else {
            Issue.record("expected a status error with an underlying error, got \(error)")
            return
        }
        let contentTypeError = try #require(underlying as? CourierError)
        guard case .unacceptableContentType("text/html", _, _) = contentTypeError else {
            Issue.record("expected unacceptableContentType underneath, got \(contentTypeError)")
            return
        }
        #expect(contentTypeError.responseData == data)
        #expect(error.errorDescription == "Request failed: not found (404)")
        #expect(error.contains(code: -1011))
        #expect(error.contains(code: -1016))
    }

    @Test func statusErrorWithUnacceptableTypeButNoBodyHasNoUnderlyingError() throws {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let error = try #require(
            serializer.validationError(response: F.response(500, contentType: "text/html"), data: nil))
        #expect(error.errorCode == -1011)
        #expect(error.underlyingError == nil)
        #expect(!error.contains(code: -1016))
    }

    @Test func validateThrowsExactlyWhenValidationErrorIsNonNil() throws {
        let serializer = HTTPResponseSerializer()
        try serializer.validate(response: F.response(200), data: nil)
        #expect(throws: CourierError.self) { try serializer.validate(response: F.response(400), data: nil) }
    }

    @Test func serializeReturnsDataUnchanged() throws {
        let data = Data([0, 1, 2, 255])
        #expect(try HTTPResponseSerializer().serialize(response: F.response(contentType: "x/y"), data: data) == data)
        #expect(try HTTPResponseSerializer().serialize(response: F.response(), data: nil) == nil)
    }

    @Test func singleSpaceBodyCountsAsABodyForValidation() {
        let serializer = HTTPResponseSerializer(acceptableContentTypes: ["application/json"])
        let error = serializer.validationError(response: F.response(contentType: "text/html"), data: F.data(" "))
        #expect(error?.errorCode == -1016)
    }
}

import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct CourierErrorTests {
    private typealias F = ResponseFixtures

    private struct Underlying: Error, CustomStringConvertible {
        var description: String { "underlying cause" }
    }

    private static let response = F.response(404, contentType: "text/html")
    private static let data = F.data("body")
    private static let context = CourierError.Context(response: response, data: data)

    private static let allCases: [CourierError] = [
        .invalidURL("ht tp://"),
        .parameterEncodingFailed(reason: "bad params", underlyingError: nil),
        .unacceptableContentType("text/html", acceptable: ["application/json"], context: context),
        .unacceptableStatusCode(404, context: context, underlyingError: nil),
        .responseSerializationFailed(reason: "bad body", context: context, underlyingError: nil),
        .cancelled(context: context),
        .serverTrustEvaluationFailed(host: "example.com", reason: "expired"),
    ]

    // MARK: Codes

    @Test func errorCodes() {
        #expect(Self.allCases.map(\.errorCode) == [-1000, -1016, -1016, -1011, -1016, -999, -1202])
    }

    @Test func bridgesToNSErrorWithCodeAndDomain() {
        for error in Self.allCases {
            let nsError = error as NSError
            #expect(nsError.code == error.errorCode)
            #expect(nsError.domain == "com.courier.error")
            #expect(CourierError.errorDomain == "com.courier.error")
            #expect(nsError.userInfo[NSLocalizedDescriptionKey] as? String == error.errorDescription)
            #expect(nsError.localizedDescription == error.errorDescription)
        }
    }

    @Test func anyErrorBridgesToo() {
        let error: any Error = CourierError.unacceptableStatusCode(500, context: Self.context, underlyingError: nil)
        #expect((error as NSError).code == -1011)
        #expect(error.localizedDescription == "Request failed: internal server error (500)")
    }

    // MARK: Descriptions

    @Test func errorDescriptions() {
        #expect(
            Self.allCases.map(\.errorDescription) == [
                "bad URL: “ht tp://” is not a valid URL.",
                "bad params",
                "Request failed: unacceptable content-type: text/html",
                "Request failed: not found (404)",
                "bad body",
                "cancelled",
                "The certificate for this server is invalid. You might be connecting to a server that is pretending to be "
                    + "“example.com” which could put your confidential information at risk.",
            ])
    }

    @Test func unacceptableContentTypeWithoutMimeTypeSaysNull() {
        let error = CourierError.unacceptableContentType(nil, acceptable: [], context: Self.context)
        #expect(error.errorDescription == "Request failed: unacceptable content-type: (null)")
    }

    @Test func descriptionIncludesTheCode() {
        let error = CourierError.unacceptableStatusCode(404, context: Self.context, underlyingError: nil)
        #expect(error.description == "CourierError -1011: Request failed: not found (404)")
        #expect(
            String(describing: CourierError.invalidURL("x")) == "CourierError -1000: bad URL: “x” is not a valid URL.")
    }

    @Test func failureReasons() {
        #expect(CourierError.serverTrustEvaluationFailed(host: "h", reason: "expired").failureReason == "expired")
        #expect(
            CourierError.responseSerializationFailed(reason: "r", context: Self.context, underlyingError: Underlying())
                .failureReason == "underlying cause")
        #expect(
            CourierError.parameterEncodingFailed(reason: "r", underlyingError: Underlying()).failureReason
                == "underlying cause")
        #expect(CourierError.parameterEncodingFailed(reason: "r", underlyingError: nil).failureReason == nil)
        #expect(CourierError.invalidURL("x").failureReason == nil)
        #expect(
            CourierError.unacceptableStatusCode(500, context: Self.context, underlyingError: Underlying()).failureReason
                == nil)
    }

    // MARK: User info

    @Test func userInfoCarriesURLReasonAndUnderlyingError() throws {
        let inner = CourierError.unacceptableContentType("text/html", acceptable: [], context: Self.context)
        let error = CourierError.responseSerializationFailed(reason: "r", context: Self.context, underlyingError: inner)
        let info = (error as NSError).userInfo
        #expect(info[NSURLErrorFailingURLErrorKey] as? URL == F.url)
        #expect(info[NSLocalizedFailureReasonErrorKey] as? String == String(describing: inner))
        let underlying = try #require(info[NSUnderlyingErrorKey] as? NSError)
        #expect(underlying.code == -1016)
        #expect(underlying.domain == "com.courier.error")
    }

    @Test func userInfoCarriesTheResponseAndBodyUnderAFNetworkingsKeys() throws {
        let error = CourierError.unacceptableStatusCode(422, context: Self.context, underlyingError: nil)
        let info = (error as NSError).userInfo
        #expect(CourierError.failingURLResponseErrorKey == "com.alamofire.serialization.response.error.response")
        #expect(CourierError.failingURLResponseDataErrorKey == "com.alamofire.serialization.response.error.data")
        #expect((info[CourierError.failingURLResponseErrorKey] as? HTTPURLResponse) === Self.response)
        #expect(info[CourierError.failingURLResponseDataErrorKey] as? Data == Self.data)
        #expect(CourierError.cancelled(context: .init()).errorUserInfo[CourierError.failingURLResponseErrorKey] == nil)
    }

    @Test func afNetworkingErrorUsesAFNetworkingsDomains() {
        let status = CourierError.unacceptableStatusCode(422, context: Self.context, underlyingError: nil)
        #expect(status.afNetworkingError.domain == "com.alamofire.error.serialization.response")
        #expect(status.afNetworkingError.code == -1011)
        #expect(status.afNetworkingError.userInfo[CourierError.failingURLResponseDataErrorKey] as? Data == Self.data)
        let parsing = CourierError.responseSerializationFailed(reason: "r", context: Self.context, underlyingError: nil)
        #expect(parsing.afNetworkingError.domain == CourierError.responseSerializationErrorDomain)
        #expect(parsing.afNetworkingError.code == -1016)
        let encoding = CourierError.parameterEncodingFailed(reason: "bad", underlyingError: nil)
        #expect(encoding.afNetworkingError.domain == "com.alamofire.error.serialization.request")
        #expect(CourierError.timedOut(context: .init()).afNetworkingError.domain == NSURLErrorDomain)
        #expect(CourierError.timedOut(context: .init()).afNetworkingError.code == NSURLErrorTimedOut)
        #expect((status as NSError).domain == CourierError.errorDomain)
    }

    @Test func userInfoUsesTheRequestURLWithoutAResponse() {
        let url = URL(string: "https://example.org/request")!
        let error = CourierError.cancelled(context: .init(request: URLRequest(url: url)))
        #expect((error as NSError).userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
        #expect(error.request?.url == url)
    }

    @Test func userInfoWithoutContextHasOnlyTheDescription() {
        let info = (CourierError.invalidURL("x") as NSError).userInfo
        #expect(info[NSURLErrorFailingURLErrorKey] == nil)
        #expect(info[NSUnderlyingErrorKey] == nil)
        #expect(info[NSLocalizedFailureReasonErrorKey] == nil)
        #expect(info[NSLocalizedDescriptionKey] as? String == "bad URL: “x” is not a valid URL.")
    }

    // MARK: Context

    @Test func contextIsPresentExactlyForExchangeErrors() {
        #expect(Self.allCases.map { $0.context != nil } == [false, false, true, true, true, true, false])
        for error in Self.allCases where error.context != nil {
            #expect(error.response === Self.response)
            #expect(error.responseData == Self.data)
            #expect(error.request == nil)
            #expect(error.serializedObject == nil)
        }
        for error in Self.allCases where error.context == nil {
            #expect(error.response == nil)
            #expect(error.responseData == nil)
        }
    }

    @Test func contextDefaults() {
        let context = CourierError.Context()
        #expect(context.request == nil)
        #expect(context.response == nil)
        #expect(context.data == nil)
        #expect(context.serializedObject == nil)
    }

    @Test func withContextUpdatesCasesThatHaveOne() throws {
        for error in Self.allCases {
            let updated = error.withContext { $0.serializedObject = JSON.string("parsed") }
            #expect(updated.errorCode == error.errorCode)
            #expect(updated.errorDescription == error.errorDescription)
            if error.context != nil {
                #expect(updated.serializedObject as? JSON == "parsed")
                #expect(updated.responseData == Self.data)
            } else {
                #expect(updated.context == nil)
            }
        }
    }

    @Test func withContextKeepsTheCaseDetails() throws {
        let underlying = CourierError.invalidURL("u")
        let error = CourierError.unacceptableStatusCode(418, context: Self.context, underlyingError: underlying)
            .withContext { $0.data = Data("new".utf8) }
        guard case .unacceptableStatusCode(418, let context, let kept?) = error else {
            Issue.record("case changed: \(error)")
            return
        }
        #expect(context.data == Data("new".utf8))
        #expect((kept as? CourierError)?.errorCode == -1000)

        let contentType = CourierError.unacceptableContentType("a/b", acceptable: ["c/d"], context: Self.context)
            .withContext { $0.response = nil }
        guard case .unacceptableContentType("a/b", let acceptable, let newContext) = contentType else {
            Issue.record("case changed: \(contentType)")
            return
        }
        #expect(acceptable == ["c/d"])
        #expect(newContext.response == nil)
    }

    // MARK: Underlying errors

    @Test func underlyingErrors() {
        let cause = Underlying()
        #expect(CourierError.parameterEncodingFailed(reason: "", underlyingError: cause).underlyingError is Underlying)
        #expect(
            CourierError.unacceptableStatusCode(500, context: Self.context, underlyingError: cause).underlyingError
                is Underlying)
        #expect(
            CourierError.responseSerializationFailed(reason: "", context: Self.context, underlyingError: cause)
                .underlyingError is Underlying)
        #expect(CourierError.invalidURL("").underlyingError == nil)
        #expect(CourierError.cancelled(context: Self.context).underlyingError == nil)
    }

    @Test func containsCodeSearchesUnderlyingCourierErrors() {
        let contentType = CourierError.unacceptableContentType("text/html", acceptable: [], context: Self.context)
        let status = CourierError.unacceptableStatusCode(500, context: Self.context, underlyingError: contentType)
        let outer = CourierError.responseSerializationFailed(reason: "", context: Self.context, underlyingError: status)
        #expect(status.contains(code: -1011))
        #expect(status.contains(code: -1016))
        #expect(!status.contains(code: -999))
        #expect(outer.contains(code: -1011))
        #expect(!contentType.contains(code: -1011))
    }

    @Test func containsCodeIgnoresNonCourierUnderlyingErrors() {
        let foreign = NSError(domain: NSURLErrorDomain, code: -1001)
        let error = CourierError.unacceptableStatusCode(500, context: Self.context, underlyingError: foreign)
        #expect(!error.contains(code: -1001))
        #expect(error.contains(code: -1011))
    }
}

import Foundation

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Responses and bodies for the response-serializer tests.
enum ResponseFixtures {
    /// The URL every fixture response has.
    static let url = URL(string: "https://example.com/x")!

    /// An HTTP/1.1 response with the given status and, when not `nil`, `Content-Type`.
    static func response(
        _ statusCode: Int = 200,
        contentType: String? = nil,
        headers: [String: String] = [:]
    ) -> HTTPURLResponse {
        var fields = headers
        if let contentType { fields["Content-Type"] = contentType }
        return HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: fields)!
    }

    /// The UTF-8 bytes of `text`.
    static func data(_ text: String) -> Data {
        Data(text.utf8)
    }
}

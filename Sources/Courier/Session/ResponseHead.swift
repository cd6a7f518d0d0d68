import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response head as the transport delivered it, with Foundation's `HTTPURLResponse` made from it only when
/// someone asks for one.
///
/// Making an `HTTPURLResponse` is the most expensive step of a small exchange on Linux (corelibs normalises every
/// header name through `NSString`), while the session itself needs only the status and a header or two. So the
/// session reads ``statusCode`` and ``headers`` directly, and ``response`` is made once, on first use, by whichever
/// thread asks first; every caller then gets the same object.
///
/// `Sendable`: the head is immutable and the one lazily made value is behind a lock.
final class ResponseHead: Sendable {
    let statusCode: Int
    let headers: HTTPHeaders
    let url: URL
    let httpVersion: String
    private let made: Locked<HTTPURLResponse?>

    init(_ response: TransportResponse) {
        statusCode = response.statusCode
        headers = response.headers
        url = response.url
        httpVersion = response.httpVersion
        made = Locked(nil)
    }

    /// A head for a response that already exists as an `HTTPURLResponse` (one served from a cache).
    init(_ response: HTTPURLResponse) {
        statusCode = response.statusCode
        var headers = HTTPHeaders()
        for case (let name as String, let value as String) in response.allHeaderFields {
            headers.add(name: name, value: value)
        }
        self.headers = headers
        url = response.url ?? URL(fileURLWithPath: "/")
        httpVersion = "HTTP/1.1"
        made = Locked(response)
    }

    /// Foundation's form of the head; repeated fields are joined with `, `. `nil` only if Foundation refuses it.
    var response: HTTPURLResponse? {
        if let made = made.withLock({ $0 }) { return made }
        let response = TransportResponse(
            statusCode: statusCode, headers: headers, url: url, httpVersion: httpVersion, body: .empty
        ).makeHTTPURLResponse()
        return made.withLock { existing in
            // Two threads may race to make it; the first one stored wins, so every caller sees one object.
            if existing == nil { existing = response }
            return existing
        }
    }

    /// The one `Content-Type` field's value (`.some(nil)` when there is none); `nil` when there are several, which
    /// Foundation would join into one value.
    var singleContentType: String?? {
        var found: String?
        for field in headers where field.name.caseInsensitiveEquals("Content-Type") {
            if found != nil { return nil }
            found = field.value
        }
        return .some(found)
    }

    /// The `Content-Length` header as a number, or `-1`.
    var contentLength: Int64 {
        headers["Content-Length"].flatMap { Int64($0) } ?? -1
    }
}

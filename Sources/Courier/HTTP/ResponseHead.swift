import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response head as the transport delivered it: status, header fields, URL and version, with Foundation's
/// `HTTPURLResponse` made from it only when someone asks for one.
///
/// Making an `HTTPURLResponse` is the most expensive step of a small exchange on Linux (corelibs normalises every
/// header name through `NSString`), while a session and its serializers need only the status and a header or two.
/// So they read ``statusCode`` and ``headers`` directly, and ``response`` is made once, on first use, by whichever
/// thread asks first; every copy of the head then hands out that same object.
///
/// `Sendable`: the head is immutable, and the one value made lazily is behind a lock that copies share.
public struct ResponseHead: Sendable {
    /// The status code.
    public let statusCode: Int
    /// The header fields, in order, repeated names kept.
    public let headers: HTTPHeaderFields
    /// The URL the response is for.
    public let url: URL
    /// E.g. `HTTP/1.1`.
    public let httpVersion: String
    private let made: Locked<HTTPURLResponse?>

    /// Creates a head.
    public init(statusCode: Int, headers: HTTPHeaderFields, url: URL, httpVersion: String = "HTTP/1.1") {
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
        self.httpVersion = httpVersion
        made = Locked(nil)
    }

    /// The head of a response that already exists as an `HTTPURLResponse` (one served from a cache, or handed to a
    /// serializer's Foundation entry); ``response`` is that object.
    public init(_ response: HTTPURLResponse) {
        var headers = HTTPHeaderFields()
        for case (let name as String, let value as String) in response.allHeaderFields {
            headers.add(name: name, value: value)
        }
        statusCode = response.statusCode
        self.headers = headers
        url = response.url ?? URL(fileURLWithPath: "/")
        httpVersion = "HTTP/1.1"
        made = Locked(response)
    }

    /// Foundation's form of the head, made on first use; repeated fields are joined with `, `. `nil` only if
    /// Foundation refuses it.
    public var response: HTTPURLResponse? {
        if let made = made.withLock({ $0 }) { return made }
        let response = Self.makeHTTPURLResponse(
            statusCode: statusCode, headers: headers, url: url, httpVersion: httpVersion)
        return made.withLock { existing in
            // Two threads may race to make it; the first one stored wins, so every caller sees one object.
            if existing == nil { existing = response }
            return existing
        }
    }

    /// Foundation's `HTTPURLResponse` for a head; repeated fields (names compared in any case, as Foundation
    /// compares them) are joined with `, ` under the first one's name.
    static func makeHTTPURLResponse(statusCode: Int, headers: HTTPHeaderFields, url: URL, httpVersion: String)
        -> HTTPURLResponse?
    {
        // One pass with a hash per name: a server may send thousands of distinct names.
        var joined: [(name: String, value: String)] = []
        joined.reserveCapacity(headers.fields.count)
        var positions = [FieldName: Int](minimumCapacity: headers.fields.count)
        for field in headers {
            if let index = positions[FieldName(field.name)] {
                joined[index].value += ", " + field.value
            } else {
                positions[FieldName(field.name)] = joined.count
                joined.append((field.name, field.value))
            }
        }
        var fields: [String: String] = Dictionary(minimumCapacity: joined.count)
        for (name, value) in joined { fields[name] = value }
        return HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: fields)
    }

    /// Whether ``response`` has been made (or the head was made from one).
    var hasMadeResponse: Bool { made.withLock { $0 != nil } }

    /// The value of a header field (any case) as Foundation's `value(forHTTPHeaderField:)` gives it: repeated
    /// fields joined with `, `; `nil` when there is none.
    public func value(forHTTPHeaderField name: String) -> String? {
        var found: String?
        for field in headers where field.name.caseInsensitiveEquals(name) {
            found = found.map { $0 + ", " + field.value } ?? field.value
        }
        return found
    }

    /// The `Content-Length` header as a number, or `-1`.
    var contentLength: Int64 {
        headers["Content-Length"].flatMap { Int64($0) } ?? -1
    }
}

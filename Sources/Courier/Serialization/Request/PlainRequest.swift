import Foundation

/// What a request serializer would send for a request with no body, without Foundation's `URLRequest`: for
/// sessions that start such a request before making the `URLRequest` a task reports (see
/// ``HTTPRequestSerializer``'s `plainRequest(method:url:parameters:)`).
struct PlainRequest: Sendable {
    /// The method, as given.
    var method: String
    /// The URL, with the query the parameters became.
    var url: URL
    /// The header fields, as the `URLRequest`'s `allHTTPHeaderFields` would have them.
    var headerFields: [String: String]
    /// The same fields sorted by name, as a transport request takes them from a `URLRequest`.
    var sortedHeaders: HTTPHeaderFields
    /// The `URLRequest`'s `httpShouldHandleCookies`.
    var handlesCookies: Bool
}

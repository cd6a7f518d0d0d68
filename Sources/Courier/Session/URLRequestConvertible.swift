import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A value a request can be made from: a `URLRequest`, a `URL`, a URL string, or a type of the app's own (a router
/// whose cases are the API's endpoints, as Alamofire's `URLRequestConvertible` is used).
///
/// ```swift
/// enum GitHub: URLRequestConvertible {
///     case repository(owner: String, name: String)
///     case search(query: String)
///
///     func asURLRequest() throws -> URLRequest {
///         let base = URL(string: "https://api.github.com/")!
///         switch self {
///         case .repository(let owner, let name):
///             return URLRequest(url: base.appendingPathComponent("repos/\(owner)/\(name)"))
///         case .search(let query):
///             let url = base.appendingPathComponent("search/repositories")
///             return try HTTPRequestSerializer().request(method: "GET", url: url, parameters: ["q": .string(query)])
///         }
///     }
/// }
/// ```
///
/// ``HTTPSessionManager/send(_:serializer:interceptor:hooks:)`` and ``HTTPSessionManager/send(_:as:decoder:)`` take one.
public protocol URLRequestConvertible: Sendable {
    /// The request.
    ///
    /// - Throws: what making it throws (an invalid URL, parameters that cannot be encoded); the call that asked fails
    ///   with it before anything is sent.
    func asURLRequest() throws -> URLRequest
}

extension URLRequest: URLRequestConvertible {
    /// Itself.
    public func asURLRequest() throws -> URLRequest { self }
}

extension URL: URLRequestConvertible {
    /// A `GET` of this URL.
    public func asURLRequest() throws -> URLRequest { URLRequest(url: self) }
}

extension String: URLRequestConvertible {
    /// A `GET` of this absolute URL.
    ///
    /// - Throws: ``CourierError/invalidURL(_:)`` when it is not one.
    public func asURLRequest() throws -> URLRequest {
        guard let url = URL(string: self), url.scheme != nil else { throw CourierError.invalidURL(self) }
        return URLRequest(url: url)
    }
}

import Foundation

extension HTTPHeaderFields: ExpressibleByArrayLiteral {
    /// Creates a list from fields, e.g. `[.authorization(bearerToken: token), .accept("application/json")]`; a later
    /// field replaces an earlier one of the same name.
    public init(arrayLiteral elements: Field...) {
        self.init(elements)
    }
}

/// The fields requests set most, made without spelling their names or formats (Alamofire's `HTTPHeader`).
extension HTTPHeaderFields.Field {
    /// `Accept: value`, e.g. `application/json`.
    public static func accept(_ value: String) -> Self { Self(name: "Accept", value: value) }

    /// `Accept-Charset: value`.
    public static func acceptCharset(_ value: String) -> Self { Self(name: "Accept-Charset", value: value) }

    /// `Accept-Encoding: value`, e.g. `gzip, deflate`.
    public static func acceptEncoding(_ value: String) -> Self { Self(name: "Accept-Encoding", value: value) }

    /// `Accept-Language: value`, e.g. `en-GB, en;q=0.9`.
    public static func acceptLanguage(_ value: String) -> Self { Self(name: "Accept-Language", value: value) }

    /// `Authorization: value`, as given.
    public static func authorization(_ value: String) -> Self { Self(name: "Authorization", value: value) }

    /// `Authorization: Bearer token` (RFC 6750).
    public static func authorization(bearerToken token: String) -> Self { authorization("Bearer \(token)") }

    /// `Authorization: Basic …`, the user name and password joined by `:` in UTF-8, in base64 (RFC 7617).
    public static func authorization(username: String, password: String) -> Self {
        authorization("Basic " + Data("\(username):\(password)".utf8).base64EncodedString())
    }

    /// `Cache-Control: value`, e.g. `no-cache`.
    public static func cacheControl(_ value: String) -> Self { Self(name: "Cache-Control", value: value) }

    /// `Content-Disposition: value`.
    public static func contentDisposition(_ value: String) -> Self { Self(name: "Content-Disposition", value: value) }

    /// `Content-Type: value`, e.g. `application/json`.
    public static func contentType(_ value: String) -> Self { Self(name: "Content-Type", value: value) }

    /// `User-Agent: value`.
    public static func userAgent(_ value: String) -> Self { Self(name: "User-Agent", value: value) }
}

/// The checks behind ``TransportRequest/maximumCollectedBodySize`` and
/// ``SessionConfiguration/maximumInMemoryBodySize``, shared by every path that holds a whole body in memory.
enum CollectedBodyLimit {
    /// Whether a response's declared `Content-Length` already passes `limit`, so its body need not be read to know
    /// it is too large. Only for a response that has a body (not to `HEAD`, not 1xx, 204 or 304) and is not
    /// content-encoded (the limit counts decompressed bytes, which a compressed length does not tell).
    static func declaredLengthExceeds(
        _ limit: Int, method: String, statusCode: Int, contentLength: String?, contentEncoding: String?
    ) -> Bool {
        guard let contentLength, let length = Int64(contentLength), contentEncoding == nil,
            !method.caseInsensitiveEquals("HEAD"), statusCode >= 200, statusCode != 204, statusCode != 304
        else { return false }
        return length > Int64(max(limit, 0))
    }

    /// Throws ``error(_:)`` when a response with `headers` declares a body past `limit` (see
    /// ``declaredLengthExceeds(_:method:statusCode:contentLength:contentEncoding:)``); nothing without a limit. The
    /// caller then releases the body unread, which closes the connection.
    static func checkDeclaredLength(_ limit: Int?, method: String, statusCode: Int, headers: HTTPHeaderFields) throws {
        guard let limit,
            declaredLengthExceeds(
                limit, method: method, statusCode: statusCode, contentLength: headers["Content-Length"],
                contentEncoding: headers["Content-Encoding"])
        else { return }
        throw error(limit)
    }

    /// The error for a body past `limit` bytes.
    static func error(_ limit: Int) -> CourierError {
        .responseTooLarge(limit: max(limit, 0), context: CourierError.Context())
    }
}

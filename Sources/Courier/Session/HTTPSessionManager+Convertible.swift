import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests decoded from a ``URLRequestConvertible`` (an app's router, a URL string), and the shared manager for
/// one-liners.
extension HTTPSessionManager {
    /// A manager with the default configuration and no base URL, for one-liners with absolute URLs
    /// (`try await HTTPSessionManager.shared.get("https://api.example.com/me", as: Me.self)`), as Alamofire's `AF`.
    /// It lives as long as the process; an app with settings of its own makes its own manager.
    public static let shared = HTTPSessionManager()

    /// Sends the request `convertible` makes and decodes the response body as `type` (JSON by default).
    ///
    /// - Throws: what making the request throws, as a ``CourierError``, before anything is sent; then what the
    ///   exchange throws.
    public func send<Value: Decodable & Sendable>(
        _ convertible: some URLRequestConvertible, as type: Value.Type, decoder: any DataDecoder = .defaultJSON
    ) async throws -> DataResponse<Value> {
        try await send(convertible, serializer: DecodableResponseSerializer(type, decoder: decoder))
    }

    static func request(from convertible: some URLRequestConvertible) throws -> URLRequest {
        do {
            return try convertible.asURLRequest()
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError.requestFailed(underlyingError: error, context: CourierError.Context())
        }
    }
}

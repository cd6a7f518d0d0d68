import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// URLSession's errors as ``CourierError``s.
    static func courierError(_ error: any Error, url: URL) -> CourierError {
        if let error = error as? CourierError { return error }
        let context = CourierError.Context()
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else {
            return .requestFailed(underlyingError: error, context: context)
        }
        switch URLError.Code(rawValue: nsError.code) {
        case .cancelled:
            return .cancelled(context: context)
        case .timedOut:
            return .timedOut(context: context)
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return .cannotConnect(host: url.host ?? "", underlyingError: error, context: context)
        case .networkConnectionLost:
            return .connectionLost(underlyingError: error, context: context)
        case .badServerResponse:
            return .badServerResponse(
                reason: "the response is not valid HTTP", underlyingError: error, context: context)
        case .unsupportedURL where nsError.localizedDescription.contains("HTTP/0.9"):
            // Linux: libcurl's "Received HTTP/0.9 when not allowed", for a status line that is not HTTP.
            return .badServerResponse(
                reason: "the status line is not HTTP", underlyingError: error, context: context)
        case .badURL, .unsupportedURL:
            // libcurl also reports a status line it cannot read (a status code below 100, say) as an unsupported
            // protocol: for a URL that passes Courier's own check, the fault is the response's.
            if (try? URLCheck.validate(url, allowsUnixSockets: false)) != nil {
                return .badServerResponse(
                    reason: "the status line is not valid HTTP (\(nsError.localizedDescription))",
                    underlyingError: error,
                    context: context)
            }
            return .invalidURL(url.absoluteString)
        case .unknown where nsError.localizedDescription.hasPrefix("transfer closed with"):
            // Linux: libcurl's "transfer closed with N bytes remaining to read" (or "with outstanding read data
            // remaining" when chunked), for a body cut short by the server closing the connection, arrives as -1.
            return .connectionLost(underlyingError: error, context: context)
        case .unknown where nsError.localizedDescription == "Nul byte in header":
            // Linux: libcurl refuses a header holding NUL (CURLE_WEIRD_SERVER_REPLY), which arrives as -1.
            return .badServerResponse(
                reason: "a header field holds a NUL byte", underlyingError: error, context: context)
        case .unknown where nsError.localizedDescription == "Failed writing header":
            // Linux: FoundationNetworking refuses a header line it cannot split (it needs a space after the colon,
            // which HTTP does not), and libcurl reports the refusal as -1.
            return .badServerResponse(
                reason: "FoundationNetworking could not read a header line", underlyingError: error, context: context)
        case .httpTooManyRedirects:
            return .tooManyRedirects(context: context)
        case .cannotDecodeContentData, .cannotDecodeRawData:
            return .badServerResponse(
                reason: "the compressed (gzip or deflate) body is corrupt", underlyingError: error, context: context)
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
            .serverCertificateNotYetValid:
            return .serverTrustEvaluationFailed(host: url.host ?? "", reason: nsError.localizedDescription)
        default:
            return .requestFailed(underlyingError: error, context: context)
        }
    }
}

/// The transport was shut down before the request was sent.
struct TransportShutDownError: Error, CustomStringConvertible {
    var description: String { "The transport has been shut down." }
}

/// The connection closed before any byte of an answer after the request's body had started to go out, and
/// URLSession could not send the body again (see ``URLSessionTransport``): the request may or may not have reached
/// the server.
struct URLSessionBodyNotResentError: Error, CustomStringConvertible, Sendable {
    var description: String {
        "The connection closed before the server answered, and URLSession cannot send the request body again."
    }
}

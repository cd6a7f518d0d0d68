import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import Tracing

/// How AsyncHTTPClient's and NIO's errors become ``CourierError``s.
extension NIOTransport {
    /// AsyncHTTPClient's and NIO's errors as ``CourierError``s; `proxy` is the one the request went through.
    static func courierError(_ error: any Error, url: URL, proxy: Proxy? = nil) -> CourierError {
        if let error = error as? CourierError { return error }
        let context = CourierError.Context(request: nil, response: nil, data: nil)
        if error is CancellationError { return .cancelled(context: context) }
        if let proxy, let failure = proxyFailure(error, proxy: proxy) { return failure }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout:
                return .timedOut(context: context)
            case .cancelled, .requestStreamCancelled:
                return .cancelled(context: context)
            case .remoteConnectionClosed:
                return .connectionLost(underlyingError: error, context: context)
            case .invalidURL, .emptyHost, .emptyScheme:
                return .invalidURL(url.absoluteString)
            default:
                return .requestFailed(underlyingError: error, context: context)
            }
        }
        if let error = error as? NIOSSLError, case .handshakeFailed = error,
            String(describing: error).contains("CERTIFICATE_VERIFY_FAILED")
        {
            // The platform's own verification (the default policy) refused the chain: -1202, as URLSession reports.
            return .serverTrustEvaluationFailed(
                host: url.host ?? "", reason: "the system's trust store does not trust the chain: \(error)")
        }
        if wasRefusedUnread(error) {
            // The server refused the stream or dropped it with its `GOAWAY`: the request was not read, as on a
            // connection lost before it was written.
            return .connectionLost(underlyingError: error, context: context)
        }
        if let error = error as? NIOHTTPDecoderError, error == .unsolicitedResponse {
            // A response arrived on a connection with no request waiting for one: AsyncHTTPClient then fails the
            // request it had just written there, which never saw an answer of its own. The connection is gone, as a
            // stale one is, and an idempotent request goes out once more on another.
            return .connectionLost(underlyingError: error, context: context)
        }
        if let error = error as? HTTPParserError, error == .invalidEOFState {
            // The server closed the connection before the body it announced was complete.
            return .connectionLost(underlyingError: error, context: context)
        }
        if let error = error as? NIOHTTPDecompression.DecompressionError {
            let reason =
                error == .limit
                ? "the response body expands beyond the decompression limit (decompressionRatioLimit times its "
                    + "compressed size) when decompressed"
                : "the compressed (gzip or deflate) body is corrupt"
            return .badServerResponse(reason: reason, underlyingError: error, context: context)
        }
        if error is HTTPParserError {
            return .badServerResponse(
                reason: "the response is not valid HTTP", underlyingError: error, context: context)
        }
        if error is NIOConnectionError
            || (error as? IOError).map({ [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains($0.errnoCode) }) == true
        {
            return .cannotConnect(host: url.host ?? "", underlyingError: error, context: context)
        }
        if let error = error as? ChannelError, case .connectTimeout = error { return .timedOut(context: context) }
        if error is IOError || error as? ChannelError == .eof || error as? ChannelError == .ioOnClosedChannel {
            return .connectionLost(underlyingError: error, context: context)
        }
        return .requestFailed(underlyingError: error, context: context)
    }

    /// The proxy's part in `error`, if it had one: it refused the credentials or the tunnel, or it could not be
    /// reached.
    private static func proxyFailure(_ error: any Error, proxy: Proxy) -> CourierError? {
        let context = CourierError.Context()
        func failed(_ reason: String, authentication: Bool = false) -> CourierError {
            .proxyFailed(
                proxy: proxy.endpoint, authentication: authentication, reason: reason, underlyingError: error,
                context: context)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .proxyAuthenticationRequired:
                return failed(
                    proxy.username == nil ? "it asks for a user name and password" : "it refused the credentials",
                    authentication: true)
            case .invalidProxyResponse:
                return failed(
                    "it refused to open a tunnel to the origin (wrong credentials, or a port it does not tunnel to)")
            case .httpProxyHandshakeTimeout, .socksHandshakeTimeout:
                return .timedOut(context: context)
            default:
                return nil
            }
        }
        if String(reflecting: type(of: error)).contains("SOCKS") {
            return failed("the SOCKS5 handshake failed")
        }
        if error is NIOConnectionError
            || (error as? IOError).map({ [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains($0.errnoCode) }) == true
        {
            return failed("could not connect to the proxy")
        }
        return nil
    }
}

extension NIOTransport {
    /// The error for an exchange in which a caller's `HTTPClient` (``init(configuration:httpClient:)``) followed a
    /// redirect itself, bypassing the session's redirect rules.
    static func redirectFollowedByClient(_ url: URL) -> CourierError {
        .unsupportedURL(
            url,
            reason: "the HTTPClient given to NIOTransport followed a redirect itself; make it with "
                + "redirectConfiguration: .disallow, since the session follows redirects",
            context: CourierError.Context())
    }
}

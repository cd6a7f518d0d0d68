import Foundation
import NIOHTTP2

/// When a collected exchange goes out again on another connection, on either of the transport's paths: a request
/// the server never read (a connection lost before any response, a stream refused), never a request that may have
/// been processed unless its method is idempotent.
extension NIOTransport {
    /// Whether a request with `method` may be sent again, once, after its connection was lost before any byte of a
    /// response arrived: only idempotent methods (RFC 9110 §9.2.2), as URLSession and curl do.
    ///
    /// A pooled connection can be closed by its server (an idle timeout, or bytes the server should not have sent)
    /// in the instant AsyncHTTPClient hands it to the next request; that request then fails without having reached
    /// the server, and a second attempt goes out on a new connection.
    static func mayRetryOnAnotherConnection(method: String) -> Bool {
        ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(method)
    }

    /// How many times an idempotent request goes out again when HTTP/2 streams it was sent on were refused unread.
    static let refusedStreamAttempts = 3

    /// Whether `error` ended an HTTP/2 stream its server never read: dropped by the server's `GOAWAY` (NIOHTTP2
    /// closes the streams past its last stream ID as cancelled) or reset as refused. Such a request can go out again
    /// on another connection (RFC 9113 §8.7); a server that keeps refusing is asked a bounded number of times.
    static func wasRefusedUnread(_ error: any Error) -> Bool {
        // A stream opened after the connection's `GOAWAY` arrived never sent its headers (RFC 9113 §6.8); NIOHTTP2
        // reports it bare or inside the stream's error.
        if error is NIOHTTP2Errors.CreatedStreamAfterGoaway { return true }
        if let streamError = error as? NIOHTTP2Errors.StreamError { return wasRefusedUnread(streamError.baseError) }
        guard let closed = error as? NIOHTTP2Errors.StreamClosed else { return false }
        return closed.errorCode == .refusedStream || closed.errorCode == .cancel
    }

    /// Whether `error` is the loss of a connection (not a refusal, a timeout or a cancellation).
    static func isStaleConnection(_ error: CourierError) -> Bool {
        if case .connectionLost = error { return true }
        return false
    }
}

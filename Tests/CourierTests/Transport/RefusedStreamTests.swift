import Foundation
import NIOHTTP2
import Testing

@testable import Courier

/// Which HTTP/2 stream errors mean the server never read the request (RFC 9113 §8.7), so an idempotent request may
/// go out again on another connection, on both of ``NIOTransport``'s paths.
struct RefusedStreamTests {
    @Test("Refused, cancelled by a GOAWAY, or opened after one: unread; any other reset: maybe read")
    func unreadErrors() {
        let stream = HTTP2StreamID(3)
        #expect(NIOTransport.wasRefusedUnread(NIOHTTP2Errors.streamClosed(streamID: stream, errorCode: .refusedStream)))
        #expect(NIOTransport.wasRefusedUnread(NIOHTTP2Errors.streamClosed(streamID: stream, errorCode: .cancel)))
        #expect(NIOTransport.wasRefusedUnread(NIOHTTP2Errors.createdStreamAfterGoaway()))
        #expect(
            !NIOTransport.wasRefusedUnread(NIOHTTP2Errors.streamClosed(streamID: stream, errorCode: .internalError)))
        #expect(!NIOTransport.wasRefusedUnread(NIOHTTP2Errors.noSuchStream(streamID: stream)))
        let mapped = NIOTransport.courierError(
            NIOHTTP2Errors.createdStreamAfterGoaway(), url: URL(string: "https://a.test/")!)
        #expect(mapped.errorCode == -1005)
    }
}

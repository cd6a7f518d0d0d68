import Foundation

/// A WebSocket message: text or binary.
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message (valid UTF-8 on the wire).
    case string(String)
    /// A binary message.
    case data(Data)
}

/// A WebSocket close code (RFC 6455 §7.4).
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code's number.
    public var rawValue: UInt16

    /// A code.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: an endpoint is going away.
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: a protocol error.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a kind of data the endpoint cannot accept.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: the close frame carried no code (never sent).
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: the connection ended without a close frame (never sent).
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a text message that is not UTF-8.
    public static let invalidFramePayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message that violates the endpoint's policy.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1011: the server met an unexpected condition.
    public static let internalServerError = WebSocketCloseCode(rawValue: 1011)

    /// Whether an endpoint may send the code in a close frame (1000–1003, 1007–1014, 3000–4999).
    public var isSendable: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { "\(rawValue)" }
}

/// Why a WebSocket connection cannot be used: it has closed (``code`` and ``reason`` from the close frame, or 1006
/// when the connection ended without one), or it never opened.
public struct WebSocketClosedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The close code.
    public var code: WebSocketCloseCode
    /// The close reason, escaped of nothing: print it with care.
    public var reason: String

    /// An error for a connection closed with `code` and `reason`.
    public init(code: WebSocketCloseCode, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String {
        reason.isEmpty ? "the WebSocket closed with \(code)" : "the WebSocket closed with \(code): \(reason)"
    }
}

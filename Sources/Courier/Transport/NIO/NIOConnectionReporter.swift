import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// Tells each response on one of AsyncHTTPClient's connections what the connection was: new or reused, when it
/// was ready, its TLS version and protocol (``NIOConnectionFacts``), for ``TransactionMetrics``.
///
/// AsyncHTTPClient's delegates never see the connection an exchange ran on; its debug initializers see every
/// connection and stream but not the exchanges. This handler joins the two: it sits right after
/// ``NIOResponseHeadGuard`` and writes the facts into each final response head as a field of its own
/// (``field``), which the transport takes out again (``takeFacts(from:)``) before anyone else sees the head. A
/// server's field of that name is dropped first, so a server cannot make up facts.
final class NIOConnectionReporter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart

    /// The field that carries the facts from this handler to the transport.
    static let field = "x-courier-connection"

    private let ready: Date
    private let tlsVersion: String?
    /// `h2` for an HTTP/2 stream; an HTTP/1 connection names the version of each response.
    private let protocolName: String?
    private var isReused: Bool

    private init(ready: Date, tlsVersion: String?, protocolName: String?, isReused: Bool) {
        self.ready = ready
        self.tlsVersion = tlsVersion
        self.protocolName = protocolName
        self.isReused = isReused
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), head.status.code >= 200 else {
            return context.fireChannelRead(data)
        }
        let facts = NIOConnectionFacts(
            isReused: isReused, connectStart: nil, ready: ready, tlsVersion: tlsVersion,
            protocolName: protocolName ?? "http/\(head.version.major).\(head.version.minor)")
        isReused = true
        head.headers.remove(name: Self.field)
        head.headers.add(name: Self.field, value: Self.encode(facts))
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// Removes the facts' field from a response head's `headers` and returns what it said; `nil` when it is not
    /// there or not readable.
    static func takeFacts(from headers: inout HTTPHeaders) -> NIOConnectionFacts? {
        guard let value = headers.first(name: field) else { return nil }
        headers.remove(name: field)
        return decode(value)
    }

    private static func encode(_ facts: NIOConnectionFacts) -> String {
        "\(facts.isReused ? "r" : "n") \(facts.ready.timeIntervalSince1970) \(facts.tlsVersion ?? "-") \(facts.protocolName)"
    }

    private static func decode(_ value: String) -> NIOConnectionFacts? {
        let parts = value.split(separator: " ")
        guard parts.count == 4, let seconds = Double(parts[1]) else { return nil }
        return NIOConnectionFacts(
            isReused: parts[0] == "r", connectStart: nil, ready: Date(timeIntervalSince1970: seconds),
            tlsVersion: parts[2] == "-" ? nil : String(parts[2]), protocolName: String(parts[3]))
    }

    // MARK: Installing

    /// Adds a reporter to a new HTTP/1 connection's pipeline, after its ``NIOResponseHeadGuard``. Call it when
    /// the connection is ready (AsyncHTTPClient's debug initializer runs after the TLS handshake).
    static func install(on channel: any Channel) -> EventLoopFuture<Void> {
        channel.onLoop { pipeline in
            let reporter = NIOConnectionReporter(
                ready: Date(), tlsVersion: tlsVersion(of: pipeline), protocolName: nil, isReused: false)
            try pipeline.addHandler(reporter, position: .after(try pipeline.handler(type: NIOResponseHeadGuard.self)))
        }
    }

    /// Notes when a new HTTP/2 connection was ready and its TLS version, for its streams' reporters.
    static func recordHTTP2Connection(_ channel: any Channel) -> EventLoopFuture<Void> {
        channel.onLoop { pipeline in
            try pipeline.addHandler(HTTP2ConnectionRecord(ready: Date(), tlsVersion: tlsVersion(of: pipeline)))
        }
    }

    /// Adds a reporter to a new HTTP/2 stream's pipeline, after its ``NIOResponseHeadGuard``: the stream is on a
    /// reused connection unless it is the connection's first.
    static func installOnHTTP2Stream(_ channel: any Channel) -> EventLoopFuture<Void> {
        channel.onLoop { pipeline in
            // A stream runs on its connection's event loop, so the connection's pipeline can be read here.
            let record = try? channel.parent?.pipeline.syncOperations.handler(type: HTTP2ConnectionRecord.self)
            let reporter = NIOConnectionReporter(
                ready: record?.ready ?? Date(), tlsVersion: record?.tlsVersion, protocolName: "h2",
                isReused: (record?.streams ?? 0) > 0)
            record?.streams += 1
            try pipeline.addHandler(reporter, position: .after(try pipeline.handler(type: NIOResponseHeadGuard.self)))
        }
    }

    /// The TLS version the pipeline's `NIOSSLHandler` negotiated, as `TransactionMetrics` names it.
    static func tlsVersion(of pipeline: ChannelPipeline.SynchronousOperations) -> String? {
        guard let handler = try? pipeline.handler(type: NIOSSLHandler.self) else { return nil }
        switch handler.tlsVersion {
        case .tlsv1: return "TLSv1.0"
        case .tlsv11: return "TLSv1.1"
        case .tlsv12: return "TLSv1.2"
        case .tlsv13: return "TLSv1.3"
        case nil: return nil
        }
    }
}

/// What an HTTP/2 connection's streams need to know of it; lives in the connection's pipeline and passes its
/// traffic on untouched (NIO takes only inbound or outbound handlers).
private final class HTTP2ConnectionRecord: ChannelInboundHandler {
    typealias InboundIn = Any

    let ready: Date
    let tlsVersion: String?
    /// Streams opened so far, touched on the connection's event loop only.
    var streams = 0

    init(ready: Date, tlsVersion: String?) {
        self.ready = ready
        self.tlsVersion = tlsVersion
    }
}

import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// Tells each response on one of AsyncHTTPClient's connections what the connection was: new or reused, when it
/// was ready, its TLS version and protocol (``NIOConnectionFacts``), for ``TransactionMetrics``.
///
/// AsyncHTTPClient's delegates never see the connection an exchange ran on; its debug initializers see every
/// connection and stream but not the exchanges. ``NIOResponseHeadGuard``, the one handler Courier adds to each
/// connection and stream, joins the two with a ``Report``: it writes the facts into each final response head as a
/// field of its own (``field``), which the transport takes out again (``takeFacts(from:)``) before anyone else sees
/// the head. A server's field of that name is dropped first, so a server cannot make up facts.
enum NIOConnectionReporter {
    /// The field that carries the facts from the guard to the transport.
    static let field = "x-courier-connection"

    /// What one connection or stream reports, with the unchanging part of the field made once, not per response.
    struct Report {
        /// `" <ready, µs since 1970> <TLS version or -> <peer's IP address or ->"`.
        private let middle: String
        /// `h2` for an HTTP/2 stream; an HTTP/1 connection names the version of each response.
        private let protocolName: String?
        private var isReused: Bool

        init(ready: Date, tlsVersion: String?, protocolName: String?, isReused: Bool, remoteAddress: String?) {
            middle =
                " \(Int64((ready.timeIntervalSince1970 * 1_000_000).rounded())) \(tlsVersion ?? "-") "
                + (remoteAddress ?? "-")
            self.protocolName = protocolName
            self.isReused = isReused
        }

        /// Writes the facts into a final response's `headers`; every later response on it is a reused one.
        mutating func stamp(_ headers: inout HTTPHeaders, version: HTTPVersion) {
            let name =
                protocolName ?? (version == .http1_1 ? "http/1.1" : "http/\(version.major).\(version.minor)")
            headers.remove(name: NIOConnectionReporter.field)
            headers.add(name: NIOConnectionReporter.field, value: (isReused ? "r" : "n") + middle + " " + name)
            isReused = true
        }
    }

    /// Removes the facts' field from a response head's `headers` and returns what it said; `nil` when it is not
    /// there or not readable.
    static func takeFacts(from headers: inout HTTPHeaders) -> NIOConnectionFacts? {
        guard let value = headers.first(name: field) else { return nil }
        headers.remove(name: field)
        return decode(value)
    }

    private static func decode(_ value: String) -> NIOConnectionFacts? {
        let parts = value.split(separator: " ")
        guard parts.count == 5, let micros = Int64(parts[1]) else { return nil }
        return NIOConnectionFacts(
            isReused: parts[0] == "r", connectStart: nil,
            ready: Date(timeIntervalSince1970: Double(micros) / 1_000_000),
            tlsVersion: parts[2] == "-" ? nil : String(parts[2]), protocolName: String(parts[4]),
            remoteAddress: parts[3] == "-" ? nil : String(parts[3]))
    }

    /// The report of a new HTTP/1 connection, ready now (AsyncHTTPClient's debug initializer runs after the TLS
    /// handshake).
    static func connectionReport(_ channel: any Channel) -> Report {
        Report(
            ready: Date(), tlsVersion: tlsVersion(of: channel.pipeline.syncOperations), protocolName: nil,
            isReused: false, remoteAddress: remoteAddress(of: channel))
    }

    /// The IP address `channel` is connected to; `nil` for a Unix socket or an unknown peer.
    static func remoteAddress(of channel: any Channel) -> String? {
        channel.remoteAddress?.ipAddress
    }

    /// Notes when a new HTTP/2 connection was ready and its TLS version, for its streams' reports.
    static func recordHTTP2Connection(_ channel: any Channel) -> EventLoopFuture<Void> {
        channel.onLoop { pipeline in
            try pipeline.addHandler(
                HTTP2ConnectionRecord(
                    ready: Date(), tlsVersion: tlsVersion(of: pipeline), remoteAddress: remoteAddress(of: channel)))
        }
    }

    /// The report of a new HTTP/2 stream: on a reused connection unless it is the connection's first. Call it on
    /// the stream's event loop, its connection's.
    static func streamReport(_ channel: any Channel) -> Report {
        let record = try? channel.parent?.pipeline.syncOperations.handler(type: HTTP2ConnectionRecord.self)
        defer { record?.streams += 1 }
        return Report(
            ready: record?.ready ?? Date(), tlsVersion: record?.tlsVersion, protocolName: "h2",
            isReused: (record?.streams ?? 0) > 0, remoteAddress: record?.remoteAddress)
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
    let remoteAddress: String?
    /// Streams opened so far, touched on the connection's event loop only.
    var streams = 0

    init(ready: Date, tlsVersion: String?, remoteAddress: String?) {
        self.ready = ready
        self.tlsVersion = tlsVersion
        self.remoteAddress = remoteAddress
    }
}

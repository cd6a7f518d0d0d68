import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
import Tracing

extension NIOTransport {
    /// How the client connects.
    public struct Configuration: Sendable {
        /// How long establishing a connection (TCP and TLS) may take; default 10 s.
        public var connectTimeout: TimeInterval = 10
        /// The most HTTP/1.1 connections kept to one host; default 32.
        public var maximumConnectionsPerHost: Int = 32
        /// How long an idle pooled connection is kept; default 60 s.
        public var idleConnectionTimeout: TimeInterval = 60
        /// Whether gzip/deflate responses are decompressed (and `Accept-Encoding` sent); default `true`.
        public var decompresses: Bool = true
        /// The largest decompressed-to-compressed ratio accepted, against decompression bombs; default 100.
        public var decompressionRatioLimit: Int = 100
        /// Whether HTTP/2 may be negotiated over TLS; default `true`.
        public var allowsHTTP2: Bool = true
        /// Whether collected exchanges (an `async` call's, whose body is in memory) of `http` and `https` requests
        /// without a proxy run on Courier's own connections instead of AsyncHTTPClient's; default `true`. They are
        /// cheaper per exchange (see ``NIOTransport``'s discussion): HTTP/1.1, or over TLS HTTP/2 when the server
        /// chooses it (one connection per origin), with the request's ``SecurityPolicy`` evaluated inside the
        /// handshake. Streamed exchanges and proxies always go through AsyncHTTPClient. Set it to `false` to send
        /// everything through AsyncHTTPClient.
        public var usesOwnConnections: Bool = Self.ownConnectionsByDefault

        /// The former name of ``usesOwnConnections``, from when the own connections spoke plain HTTP/1.1 only.
        @available(*, deprecated, renamed: "usesOwnConnections")
        public var usesOwnHTTP1Connections: Bool {
            get { usesOwnConnections }
            set { usesOwnConnections = newValue }
        }

        /// `true`, except in a debug build run with `COURIER_NIO_OWN_CONNECTIONS=0` in its environment: the test
        /// suite runs that way too (`Scripts/test.sh`), so that every test that makes a default transport also
        /// checks the AsyncHTTPClient path. A release build never reads the environment.
        static let ownConnectionsByDefault: Bool = {
            #if DEBUG
                return ProcessInfo.processInfo.environment["COURIER_NIO_OWN_CONNECTIONS"] != "0"
            #else
                return true
            #endif
        }()
        /// Whether a failed connection attempt (refused, or a TLS handshake the system's trust refuses) is retried
        /// with backoff until ``connectTimeout``; default `false`: the request fails at once, as URLSession's do.
        public var retriesFailedConnections: Bool = false
        /// Addresses to connect to instead of resolving a URL's host, keyed by the host as the URL has it (e.g.
        /// `["api.example.com": "10.0.0.7"]`); default none. The request keeps the URL's host for `Host`, SNI and the
        /// certificate check, as curl's `--resolve` does. Every connection the transport makes without a proxy follows
        /// it (through a proxy, the proxy resolves the host).
        public var hostAddresses: [String: String] = [:]
        /// Where connections for some origins go instead (curl's `--connect-to`), the first that matches taken;
        /// default none. The request keeps its URL's host and port for `Host`, SNI and the certificate check; see
        /// ``ConnectionRoute``.
        public var connectionRoutes: [ConnectionRoute] = []
        /// The local IP address (e.g. `"192.0.2.10"` or `"::1"`) every connection is bound to before it connects, to
        /// choose the interface on a host with several; default `nil`, the system's choice. An address that is not an
        /// IP address fails the request.
        public var localAddress: String?
        /// The most requests one connection carries before it is closed and replaced (e.g. so that traffic spreads
        /// over servers behind a load balancer); default `nil`, no limit. Values below 1 count as 1. When set,
        /// collected exchanges go through AsyncHTTPClient too (see ``usesOwnConnections``).
        public var maximumRequestsPerConnection: Int?
        /// The oldest TLS version offered; default `nil`, NIOSSL's (TLS 1.0). E.g. `.tlsv12`.
        public var minimumTLSVersion: TLSVersion?
        /// The newest TLS version offered; default `nil`, the newest NIOSSL has (TLS 1.3).
        public var maximumTLSVersion: TLSVersion?
        /// The cipher suites offered for TLS 1.2 and older, in order; default `nil`, NIOSSL's list. TLS 1.3's suites
        /// are not configurable in NIOSSL.
        public var cipherSuites: [NIOTLSCipher]?

        /// The default configuration.
        public init() {}

        /// The TLS configuration every connection starts from: NIOSSL's client defaults with the versions and
        /// cipher suites above.
        var baseTLS: TLSConfiguration {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let minimumTLSVersion { tls.minimumTLSVersion = minimumTLSVersion }
            if let maximumTLSVersion { tls.maximumTLSVersion = maximumTLSVersion }
            if let cipherSuites { tls.cipherSuiteValues = cipherSuites }
            return tls
        }

        /// Whether the TLS configuration is NIOSSL's default.
        var hasDefaultTLS: Bool { minimumTLSVersion == nil && maximumTLSVersion == nil && cipherSuites == nil }

        /// Where the transport's own connections connect.
        var dialOptions: NIODialOptions {
            NIODialOptions(routes: connectionRoutes, hostAddresses: hostAddresses, localAddress: localAddress)
        }

        /// Whether Courier's own connections can serve collected exchanges: asked for, and no setting they do not
        /// follow.
        var ownConnectionsApply: Bool {
            usesOwnConnections && maximumRequestsPerConnection == nil
        }
    }
}

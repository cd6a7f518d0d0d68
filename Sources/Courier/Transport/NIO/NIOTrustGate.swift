import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Enforces one ``SecurityPolicy`` for one `https` origin on ``NIOTransport``: the design is in the Security article.
///
/// AsyncHTTPClient shows a connection initializer only the peer's leaf certificate, never its chain, and rejecting
/// a connection there is safe only with `retryConnectionEstablishment` off (otherwise its pool crashes, "Backing off
/// a connection that is unknown to us?"). So:
///
/// 1. Before the first request, the gate makes its own TLS handshake (NIOSSL with a custom verification callback,
///    which sees the whole chain), evaluates the policy there, remembers the accepted leaf, and closes the
///    connection. A refusal fails the request with -1202 at once: AsyncHTTPClient is never asked, nothing is sent.
/// 2. Requests then go through the gate's own `HTTPClient` (its pool holds connections to this origin only, under
///    this policy), whose NIOSSL verification is off (the gate is the verification) and whose connection
///    initializers admit a connection only when it presents an accepted leaf. Presenting the same leaf means the
///    server holds the same private key (TLS proves it in the handshake), so the earlier verdict applies. Any other
///    leaf closes the connection and fails the request with -1202 before a byte is written, and the accepted
///    leaves are forgotten, so the next request evaluates afresh.
final class NIOTrustGate: Sendable {
    struct Key: Hashable, Sendable {
        var host: String
        var port: Int
        var policy: SecurityPolicy
        /// Its client's proxy and HTTP versions.
        var client: NIOTransport.ClientKind
    }

    /// The leaves evaluated and accepted, shared with the connection initializers.
    final class AcceptedLeaves: Sendable {
        let leaves = Locked(Set<Data>())
    }

    let key: Key
    let client: HTTPClient
    /// Internal for the tests, which plant a leaf to drive the connection-initializer path.
    let accepted: AcceptedLeaves
    private let probeContext: NIOSSLContext
    private let connectTimeout: TimeAmount
    private let probe = Locked<Task<Void, any Error>?>(nil)
    /// The transport's event loops, for the gate's client and its probe.
    private let group: any EventLoopGroup

    /// Where the probe connects, as the gate's client does.
    private let dialOptions: NIODialOptions

    init(
        key: Key, baseSettings: HTTPClient.Configuration, baseTLS: TLSConfiguration, dialOptions: NIODialOptions,
        group: any EventLoopGroup, connectTimeout: TimeAmount
    ) throws {
        self.key = key
        self.group = group
        self.dialOptions = dialOptions
        self.connectTimeout = connectTimeout
        var tls = try NIOPolicyTLS.clientConfiguration(for: key.policy, base: baseTLS)
        // The probe's callback replaces NIOSSL's verification; it is only called when verification is on.
        var probeTLS = tls
        probeTLS.certificateVerification = .fullVerification
        do {
            probeContext = try NIOSSLContext(configuration: probeTLS)
        } catch {
            throw CourierError.requestFailed(underlyingError: error, context: CourierError.Context())
        }

        let accepted = AcceptedLeaves()
        self.accepted = accepted
        let host = key.host
        let check: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
            Self.admit(channel, accepted: accepted, host: host)
        }
        var settings = baseSettings
        tls.certificateVerification = .none  // the gate verified the leaf; see the type's comment
        settings.tlsConfiguration = tls
        // Required: rejecting a connection in an initializer while retries are on crashes AsyncHTTPClient's pool.
        settings.connectionPool.retryConnectionEstablishment = false
        // The transport's own initializers (the head guard, the connection reporter) first, then the admission.
        let (http1, http2) = (
            baseSettings.http1_1ConnectionDebugInitializer, baseSettings.http2ConnectionDebugInitializer
        )
        settings.http1_1ConnectionDebugInitializer = { channel in
            (http1?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()).flatMap { check(channel) }
        }
        settings.http2ConnectionDebugInitializer = { channel in
            (http2?(channel) ?? channel.eventLoop.makeSucceededVoidFuture()).flatMap { check(channel) }
        }
        client = HTTPClient(eventLoopGroup: group, configuration: settings)
    }

    deinit {
        // No promise on the group, which its owner may have shut down already (see ``NIOTransport``'s deinit).
        client.shutdown { _ in }
    }

    func shutdown() async {
        try? await client.shutdown()
    }

    /// Whether a leaf of this origin has passed the policy (and none has failed since).
    var isTrusted: Bool { !accepted.leaves.withLock { $0.isEmpty } }

    /// Returns once a leaf of this origin has passed the policy; evaluates (one handshake) when none has.
    ///
    /// - Throws: ``CourierError/serverTrustEvaluationFailed(host:reason:)`` when the chain fails the policy;
    ///   connection errors as NIO reports them.
    func ensureTrusted() async throws {
        if isTrusted { return }
        let task = probe.withLock { running -> Task<Void, any Error> in
            if let running { return running }
            let task = Task { try await self.evaluateOnce() }
            running = task
            return task
        }
        defer { probe.withLock { if $0 == task { $0 = nil } } }
        try await task.value
    }

    /// Admits a pooled connection whose leaf was accepted; closes any other (on the event loop, before AsyncHTTPClient
    /// hands the connection to a request).
    private static func admit(_ channel: any Channel, accepted: AcceptedLeaves, host: String) -> EventLoopFuture<Void> {
        let leaf: Data?
        if channel.eventLoop.inEventLoop {
            leaf = (try? channel.pipeline.syncOperations.nioSSL_peerCertificate()?.toDERBytes()).map { Data($0) }
        } else {
            return channel.nioSSL_peerCertificate().flatMap { certificate in
                let leaf = (try? certificate?.toDERBytes()).map { Data($0) }
                return verdict(leaf, channel: channel, accepted: accepted, host: host)
            }
        }
        return verdict(leaf, channel: channel, accepted: accepted, host: host)
    }

    private static func verdict(
        _ leaf: Data?, channel: any Channel, accepted: AcceptedLeaves, host: String
    ) -> EventLoopFuture<Void> {
        if let leaf, accepted.leaves.withLock({ $0.contains(leaf) }) {
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        accepted.leaves.withLock { $0.removeAll() }
        channel.close(promise: nil)  // otherwise the rejected connection stays open
        return channel.eventLoop.makeFailedFuture(
            CourierError.serverTrustEvaluationFailed(
                host: host,
                reason: "the server presented a certificate other than the one evaluated for this host; it will be "
                    + "evaluated again on the next request"))
    }

    /// One TLS handshake to the origin, the policy evaluated over the full chain inside it.
    private func evaluateOnce() async throws {
        let host = key.host
        let policy = key.policy
        let outcome = Locked<(evaluation: TrustEvaluation, leaf: Data?)?>(nil)
        let sniHost = NIOPolicyTLS.serverName(for: host)
        let context = probeContext
        let handshakeDone = Locked<EventLoopFuture<Void>?>(nil)
        // Through the proxy's tunnel when there is one: the chain evaluated is the origin's.
        let channel = try await NIOProxyTunnel.connect(
            host: host, port: key.port, through: key.client.proxy, group: group, dialOptions: dialOptions,
            timeout: connectTimeout
        ) { pipeline in
            let eventLoop = pipeline.eventLoop
            let handler = try NIOSSLClientHandler(
                context: context, serverHostname: sniHost,
                customVerificationCallback: NIOPolicyTLS.verificationCallback(
                    policy: policy, host: host, eventLoop: eventLoop
                ) { evaluation, chain in outcome.withLock { $0 = (evaluation, chain.first) } })
            let promise = eventLoop.makePromise(of: Void.self)
            handshakeDone.withLock { $0 = promise.futureResult }
            try pipeline.addHandler(handler)
            try pipeline.addHandler(HandshakeWaiter(promise: promise))
        }
        let timeout = channel.eventLoop.scheduleTask(in: connectTimeout) { channel.close(promise: nil) }
        let handshake: Result<Void, any Error>
        do {
            guard let done = handshakeDone.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
            try await done.get()
            handshake = .success(())
        } catch {
            handshake = .failure(error)
        }
        timeout.cancel()
        try? await channel.close()
        guard let (evaluation, leaf) = outcome.withLock({ $0 }) else {
            // No chain was seen: the handshake failed before it (not TLS, a protocol error, a timeout).
            if case .failure(let error) = handshake { throw error }
            throw CourierError.serverTrustEvaluationFailed(host: host, reason: "the server sent no certificate")
        }
        guard evaluation.isTrusted, let leaf else {
            throw CourierError.serverTrustEvaluationFailed(host: host, reason: evaluation.reason)
        }
        accepted.leaves.withLock { _ = $0.insert(leaf) }
    }
}

/// Completes its promise when the TLS handshake on its channel has finished or failed.
private final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private var promise: EventLoopPromise<Void>?

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            promise?.succeed(())
            promise = nil
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise?.fail(error)
        promise = nil
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.eof)
        promise = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.ioOnClosedChannel)
        promise = nil
    }
}

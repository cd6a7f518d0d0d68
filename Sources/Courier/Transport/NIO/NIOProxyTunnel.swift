import Foundation
import NIOCore
import NIOPosix

/// Connections Courier makes on its own channels (the trust gate's probe, WebSockets) to an origin, directly or
/// through a ``Proxy``'s tunnel: HTTP `CONNECT` (with Basic credentials) or SOCKS5 (RFC 1928, with RFC 1929's user
/// name and password).
///
/// The origin's handlers (TLS first) are added only once the tunnel is open, so the TLS handshake, and the
/// security policy's check inside it, is with the origin through the tunnel, never with the proxy.
enum NIOProxyTunnel {
    /// Connects to `host:port`, through `proxy` when there is one, and adds the origin's handlers with `configure`
    /// (on the channel's event loop, before any byte of the origin's protocol is sent). `dialOptions` choose the
    /// local address, and the address connected to for `host` when there is no proxy.
    ///
    /// - Throws: ``CourierError/proxyFailed(proxy:authentication:reason:underlyingError:context:)`` when the proxy
    ///   refuses; connection errors as NIO reports them.
    static func connect(
        host: String, port: Int, through proxy: Proxy?, group: any EventLoopGroup,
        dialOptions: NIODialOptions = NIODialOptions(), timeout: TimeAmount,
        configure: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) async throws -> any Channel {
        let bootstrap = try dialOptions.apply(to: ClientBootstrap(group: group))
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if proxy == nil { try configure(channel.pipeline.syncOperations) }
                }
            }
        guard let proxy else {
            let target = dialOptions.target(host: host, port: port)
            return try await bootstrap.connect(host: target.host, port: target.port).get()
        }
        let channel = try await bootstrap.connect(host: proxy.host, port: proxy.port).get()
        let opened = channel.eventLoop.makePromise(of: Void.self)
        let deadline = channel.eventLoop.scheduleTask(in: timeout) {
            opened.fail(CourierError.timedOut(context: CourierError.Context()))
        }
        let script = TunnelScript(proxy: proxy, host: host, port: port)
        do {
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(
                    TunnelHandler(script: script, opened: opened), name: TunnelHandler.name)
            }.get()
            try await opened.futureResult.get()
            deadline.cancel()
            try await channel.eventLoop.flatSubmit {
                channel.pipeline.removeHandler(name: TunnelHandler.name).flatMapThrowing {
                    try configure(channel.pipeline.syncOperations)
                }
            }.get()
        } catch {
            deadline.cancel()
            channel.close(promise: nil)
            throw error
        }
        return channel
    }
}

/// The bytes a tunnel exchanges: what to send first, and how to read each answer.
struct TunnelScript: Sendable {
    let proxy: Proxy
    let host: String
    let port: Int

    /// Where the exchange is.
    enum Step: Sendable {
        case httpConnect
        case socksGreeting
        case socksAuthentication
        case socksConnect
        case open
    }

    /// What the handler does with what has arrived.
    enum Outcome {
        /// Wait for more bytes.
        case needMore
        /// Consume `consumed` bytes, send `send` (if any) and go to `next`.
        case proceed(consumed: Int, send: [UInt8]?, next: Step)
        case fail(CourierError)
    }

    var firstStep: Step { proxy.kind == .http ? .httpConnect : .socksGreeting }

    /// The message that opens the exchange.
    var opening: [UInt8] {
        switch proxy.kind {
        case .http:
            let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            var head = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
            if let authorization = proxy.basicAuthorization { head += "Proxy-Authorization: \(authorization)\r\n" }
            return Array((head + "\r\n").utf8)
        case .socks5:
            return proxy.username == nil ? [5, 1, 0] : [5, 2, 0, 2]
        }
    }

    /// Reads `bytes` at `step`.
    func read(_ bytes: [UInt8], at step: Step) -> Outcome {
        switch step {
        case .httpConnect: return readConnectResponse(bytes)
        case .socksGreeting:
            guard bytes.count >= 2 else { return .needMore }
            guard bytes[0] == 5 else { return .fail(failure("the proxy does not speak SOCKS5")) }
            switch bytes[1] {
            case 0: return .proceed(consumed: 2, send: connectRequest, next: .socksConnect)
            case 2:
                guard let username = proxy.username else { return .fail(failure("it wants a user name", true)) }
                let user = Array(username.utf8.prefix(255))
                let password = Array((proxy.password ?? "").utf8.prefix(255))
                let message = [1, UInt8(user.count)] + user + [UInt8(password.count)] + password
                return .proceed(consumed: 2, send: message, next: .socksAuthentication)
            default:
                return .fail(failure("it accepts none of the authentication methods offered", true))
            }
        case .socksAuthentication:
            guard bytes.count >= 2 else { return .needMore }
            guard bytes[1] == 0 else { return .fail(failure("it refused the user name and password", true)) }
            return .proceed(consumed: 2, send: connectRequest, next: .socksConnect)
        case .socksConnect:
            guard bytes.count >= 5 else { return .needMore }
            guard bytes[0] == 5, bytes[1] == 0 else {
                return .fail(failure("it could not connect to \(host):\(port) (SOCKS reply \(bytes[1]))"))
            }
            let addressLength: Int
            switch bytes[3] {
            case 1: addressLength = 4
            case 4: addressLength = 16
            case 3: addressLength = 1 + Int(bytes[4])
            default: return .fail(failure("its reply has an unknown address type"))
            }
            let total = 4 + addressLength + 2
            guard bytes.count >= total else { return .needMore }
            return .proceed(consumed: total, send: nil, next: .open)
        case .open:
            return .needMore
        }
    }

    private var connectRequest: [UInt8] {
        let portBytes: [UInt8] = [UInt8(truncatingIfNeeded: port >> 8), UInt8(truncatingIfNeeded: port)]
        if let address = IPAddress.bytes(host) {
            return [5, 1, 0, address.count == 4 ? 1 : 4] + address + portBytes
        }
        let name = Array(host.utf8.prefix(255))
        return [5, 1, 0, 3, UInt8(name.count)] + name + portBytes
    }

    private func readConnectResponse(_ bytes: [UInt8]) -> Outcome {
        let end: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = bytes.indices.dropLast(3).first(where: { Array(bytes[$0..<$0 + 4]) == end }) else {
            return bytes.count > 16 * 1024 ? .fail(failure("its answer to CONNECT is too long")) : .needMore
        }
        let statusLine = String(decoding: bytes[..<(bytes[..<headEnd].firstIndex(of: 13) ?? headEnd)], as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            return .fail(failure("its answer to CONNECT is not HTTP"))
        }
        guard (200..<300).contains(status) else {
            let shown = TunnelScript.printable(statusLine)
            // 407 asks for credentials; tinyproxy 1.11 answers wrong ones with 401, which only the proxy can mean.
            return .fail(failure("it answered CONNECT with \(shown)", status == 407 || status == 401))
        }
        return .proceed(consumed: headEnd + 4, send: nil, next: .open)
    }

    private func failure(_ reason: String, _ authentication: Bool = false) -> CourierError {
        .proxyFailed(
            proxy: proxy.endpoint, authentication: authentication, reason: reason, underlyingError: nil,
            context: CourierError.Context())
    }

    /// A server's status line with control characters and anything past 120 characters left out.
    static func printable(_ line: String) -> String {
        String(line.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(120).map(Character.init))
    }
}

/// Runs a ``TunnelScript`` on a channel connected to the proxy; completes `opened` when the tunnel is open.
private final class TunnelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    static let name = "courier-proxy-tunnel"

    private let script: TunnelScript
    private let opened: EventLoopPromise<Void>
    private var step: TunnelScript.Step
    private var received: [UInt8] = []
    private var started = false

    init(script: TunnelScript, opened: EventLoopPromise<Void>) {
        self.script = script
        self.opened = opened
        step = script.firstStep
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        send(script.opening, context)
    }

    private func send(_ bytes: [UInt8], _ context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        received += buffer.readBytes(length: buffer.readableBytes) ?? []
        while step != .open {
            switch script.read(received, at: step) {
            case .needMore:
                return
            case .proceed(let consumed, let message, let next):
                received.removeFirst(consumed)
                step = next
                if let message { send(message, context) }
            case .fail(let error):
                opened.fail(error)
                context.close(promise: nil)
                return
            }
        }
        // The origin speaks only after the client's first bytes (TLS, or the upgrade request): nothing is left.
        opened.succeed(())
    }

    func channelInactive(context: ChannelHandlerContext) {
        opened.fail(
            CourierError.proxyFailed(
                proxy: script.proxy.endpoint, authentication: false, reason: "it closed the connection",
                underlyingError: nil, context: CourierError.Context()))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        opened.fail(error)
        context.close(promise: nil)
    }
}

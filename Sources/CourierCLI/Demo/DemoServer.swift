import CourierFixtures
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The server `courier demo` talks to: HTTP/1.1 on 127.0.0.1 with a free port, and the same routes over HTTPS on a
/// second port with a certificate chain made at start (root → intermediate → leaf for 127.0.0.1 and localhost). In
/// this process, nothing else on the network.
///
/// Routes:
/// - `GET /search`: echoes the raw query string and its decoded pairs, in order;
/// - `POST /users`: creates a user from a JSON body (201), or answers 422 with a JSON problem document;
/// - `GET /events`: three lines of JSON, one every 50 ms (a streamed response);
/// - `GET /slow`: answers after 2 s (a timeout);
/// - `GET /files/archive.bin`: a generated file, with `ETag` and `Range` / `If-Range` support, sent in chunks as
///   the client reads them;
/// - `POST /upload`: answers with the body's length, type and SHA-256 (the multipart step);
/// - `GET /catalog`: a small JSON document with an `ETag` and `Cache-Control: no-cache`, `304` when `If-None-Match`
///   names it (the caching step);
/// - `GET /tiles/<n>.bmp` (n from 0 to 9): a `(8 + n)` × 8 bitmap of one colour, after 100 ms (the image step).
final class DemoServer: Sendable {
    /// `http://127.0.0.1:<port>/`.
    let baseURL: URL
    /// `https://127.0.0.1:<port>/`.
    let httpsBaseURL: URL
    /// The chain the HTTPS listener presents; its root is trusted by nobody but the demo.
    let chain: CertificateChain
    /// The file served at `/files/archive.bin`.
    let archive: Data
    /// The file's entity tag.
    static let archiveTag = "\"archive-v1\""
    private let channels: [any Channel]

    private init(channels: [any Channel], baseURL: URL, httpsBaseURL: URL, chain: CertificateChain, archive: Data) {
        self.channels = channels
        self.baseURL = baseURL
        self.httpsBaseURL = httpsBaseURL
        self.chain = chain
        self.archive = archive
    }

    /// Starts both listeners, with a generated file of `archiveSize` bytes.
    static func start(archiveSize: Int = 4 << 20) async throws -> DemoServer {
        var generator = SplitMix64(seed: 0xC0FFEE)
        var archive = Data(count: archiveSize)
        archive.withUnsafeMutableBytes { buffer in
            for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: generator.next()) }
        }
        let chain = try CertificateChain.make(name: "courier demo")
        let certificates = try NIOSSLCertificate.fromPEMBytes(Array(chain.fullChainPEM.utf8))
        let key = try NIOSSLPrivateKey(bytes: Array(chain.leaf.privateKeyPEM.utf8), format: .pem)
        let tls = try NIOSSLContext(
            configuration: .makeServerConfiguration(
                certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(key)))
        let plain = try await listen(archive: archive, tls: nil)
        let secure: any Channel
        do {
            secure = try await listen(archive: archive, tls: tls)
        } catch {
            try? await plain.close()
            throw error
        }
        guard let port = plain.localAddress?.port, let securePort = secure.localAddress?.port,
            let url = URL(string: "http://127.0.0.1:\(port)/"),
            let httpsURL = URL(string: "https://127.0.0.1:\(securePort)/")
        else {
            try? await plain.close()
            try? await secure.close()
            throw CommandFailure(.failure, "the demo server could not bind a port on 127.0.0.1")
        }
        return DemoServer(
            channels: [plain, secure], baseURL: url, httpsBaseURL: httpsURL, chain: chain, archive: archive)
    }

    private static func listen(archive: Data, tls: NIOSSLContext?) async throws -> any Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(DemoHandler(archive: archive))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    /// The colour of tile `number`, as RGB.
    static func tileColour(_ number: Int) -> (UInt8, UInt8, UInt8) {
        let hue = [(230, 80, 70), (70, 160, 230), (90, 200, 110), (240, 190, 60), (170, 100, 220)]
        let (r, g, b) = hue[number % hue.count]
        return (UInt8(r), UInt8(g), UInt8(b))
    }

    /// Tile `number`: an uncompressed 24-bit BMP, `(8 + number)` × 8 pixels of ``tileColour(_:)``.
    static func tile(_ number: Int) -> Data {
        let width = 8 + number
        let height = 8
        let rowBytes = (width * 3 + 3) / 4 * 4
        func le(_ value: Int, _ count: Int) -> [UInt8] {
            (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        let (r, g, b) = tileColour(number)
        let row = (0..<width).flatMap { _ in [b, g, r] } + [UInt8](repeating: 0, count: rowBytes - width * 3)
        let header =
            Array("BM".utf8) + le(54 + rowBytes * height, 4) + le(0, 4) + le(54, 4) + le(40, 4) + le(width, 4)
            + le(height, 4) + le(1, 2) + le(24, 2) + le(0, 4) + le(rowBytes * height, 4) + le(2835, 4) + le(2835, 4)
            + le(0, 4) + le(0, 4)
        return Data(header + (0..<height).flatMap { _ in row })
    }

    /// Stops listening.
    func stop() async {
        for channel in channels { try? await channel.close() }
    }
}

/// Answers one connection's requests. Runs on its channel's event loop only.
private final class DemoHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let archive: Data
    private var head: HTTPRequestHead?
    private var body = Data()

    init(archive: Data) {
        self.archive = archive
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = Data()
        case .body(var buffer):
            body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
        case .end:
            if let head { route(context, head) }
            head = nil
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func route(_ context: ChannelHandlerContext, _ request: HTTPRequestHead) {
        let path = String(request.uri.prefix { $0 != "?" })
        let query = request.uri.contains("?") ? String(request.uri.drop { $0 != "?" }.dropFirst()) : ""
        switch (request.method, path) {
        case (.GET, "/search"):
            let pairs = query.split(separator: "&").map { pair -> [String] in
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).removingPercentEncoding ?? String($0)
                }
                return [parts.first ?? "", parts.count > 1 ? parts[1] : ""]
            }
            sendJSON(context, .ok, ["query": query, "pairs": pairs])
        case (.POST, "/users"):
            createUser(context)
        case (.GET, "/events"):
            sendEvents(context)
        case (.GET, "/slow"):
            context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(2)) {
                self.sendJSON(context, .ok, ["slow": true])
            }
        case (.GET, "/catalog"):
            sendCatalog(context, request)
        case (.GET, "/files/archive.bin"):
            sendArchive(context, request)
        case (.GET, _) where path.hasPrefix("/tiles/") && path.hasSuffix(".bmp"):
            guard let number = Int(path.dropFirst("/tiles/".count).dropLast(".bmp".count)), (0...9).contains(number)
            else { return sendJSON(context, .notFound, ["error": "no such tile"]) }
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(100)) {
                self.send(context, DemoServer.tile(number), type: "image/bmp")
            }
        case (.POST, "/upload"):
            let contentType = request.headers.first(name: "Content-Type") ?? ""
            let parts = Self.multipartParts(body, contentType: contentType).map { part -> [String: Any] in
                [
                    "name": part.name, "filename": part.fileName ?? "", "bytes": part.body.count,
                    "sha256": SHA256.hash(data: part.body).map { String(format: "%02x", $0) }.joined(),
                ]
            }
            sendJSON(context, .ok, ["bytes": body.count, "contentType": contentType, "parts": parts])
        default:
            sendJSON(context, .notFound, ["error": "no route for \(request.method) \(path)"])
        }
    }

    /// The parts of a `multipart/form-data` body: just enough of RFC 7578 to check what the demo sent.
    static func multipartParts(_ body: Data, contentType: String) -> [(name: String, fileName: String?, body: Data)] {
        guard let range = contentType.range(of: "boundary=") else { return [] }
        let boundary = Data(("--" + contentType[range.upperBound...].trimmingCharacters(in: ["\""])).utf8)
        let headerEnd = Data("\r\n\r\n".utf8)
        var parts: [(String, String?, Data)] = []
        var cursor = body.startIndex
        while let start = body.range(of: boundary, in: cursor..<body.endIndex) {
            let partStart = start.upperBound + 2  // the CRLF after the boundary
            guard partStart <= body.endIndex, let next = body.range(of: boundary, in: partStart..<body.endIndex),
                let headers = body.range(of: headerEnd, in: partStart..<next.lowerBound)
            else { break }
            let head = String(decoding: body[partStart..<headers.lowerBound], as: UTF8.self)
            let content = body[headers.upperBound..<(next.lowerBound - 2)]  // the CRLF before the boundary
            parts.append((Self.parameter("name", in: head) ?? "", Self.parameter("filename", in: head), Data(content)))
            cursor = next.lowerBound
        }
        return parts
    }

    private static func parameter(_ name: String, in head: String) -> String? {
        guard let range = head.range(of: " \(name)=\"") else { return nil }
        return String(head[range.upperBound...].prefix { $0 != "\"" })
    }

    private func createUser(_ context: ChannelHandlerContext) {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            sendJSON(context, .badRequest, ["error": "the body is not a JSON object"])
            return
        }
        var problems: [String: String] = [:]
        let name = object["name"] as? String ?? ""
        let email = object["email"] as? String ?? ""
        if name.isEmpty { problems["name"] = "is required" }
        if !email.contains("@") { problems["email"] = "must be an address like ada@example.com" }
        guard problems.isEmpty else {
            sendJSON(context, .unprocessableEntity, ["error": "validation failed", "fields": problems])
            return
        }
        sendJSON(context, .created, ["id": 1815, "name": name, "email": email])
    }

    private func sendEvents(_ context: ChannelHandlerContext) {
        let headers = HTTPHeaders([("Content-Type", "application/x-ndjson")])
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        let events = [
            #"{"event":"queued","job":7}"#, #"{"event":"running","job":7,"percent":50}"#,
            #"{"event":"done","job":7}"#,
        ]
        for (index, event) in events.enumerated() {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(50 * (index + 1)))) {
                let buffer = context.channel.allocator.buffer(string: event + "\n")
                context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
                if index == events.count - 1 {
                    context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
                }
            }
        }
    }

    private func sendCatalog(_ context: ChannelHandlerContext, _ request: HTTPRequestHead) {
        let tag = "\"catalog-v1\""
        guard request.headers.first(name: "If-None-Match") != tag else {
            let headers = HTTPHeaders([("ETag", tag), ("Cache-Control", "no-cache"), ("Content-Length", "0")])
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notModified, headers: headers))),
                promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let data = Data(#"{"items":["courier","nio","tls"],"version":1}"#.utf8)
        let headers = HTTPHeaders([
            ("Content-Type", "application/json"), ("Content-Length", "\(data.count)"), ("ETag", tag),
            ("Cache-Control", "no-cache"),
        ])
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: data)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    private func sendArchive(_ context: ChannelHandlerContext, _ request: HTTPRequestHead) {
        var headers = HTTPHeaders([
            ("ETag", DemoServer.archiveTag), ("Accept-Ranges", "bytes"), ("Content-Type", "application/octet-stream"),
        ])
        var status = HTTPResponseStatus.ok
        var start = 0
        let ifRange = request.headers.first(name: "If-Range")
        if let range = request.headers.first(name: "Range"), ifRange == nil || ifRange == DemoServer.archiveTag,
            range.hasPrefix("bytes="), range.hasSuffix("-"), let first = Int(range.dropFirst(6).dropLast())
        {
            // A negative start (`bytes=-5-`) would index before the archive; it is refused like one past the end.
            guard first >= 0, first < archive.count else {
                headers.add(name: "Content-Range", value: "bytes */\(archive.count)")
                headers.add(name: "Content-Length", value: "0")
                let head = HTTPResponseHead(version: .http1_1, status: .rangeNotSatisfiable, headers: headers)
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            status = .partialContent
            start = first
            headers.add(name: "Content-Range", value: "bytes \(first)-\(archive.count - 1)/\(archive.count)")
        }
        headers.add(name: "Content-Length", value: "\(archive.count - start)")
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        writeArchive(context, from: start)
    }

    /// One 64 KiB chunk at a time, each after the previous one has gone out, a few milliseconds apart so the
    /// progress bar has something to show.
    private func writeArchive(_ context: ChannelHandlerContext, from offset: Int) {
        guard offset < archive.count else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        let end = min(archive.count, offset + 64 * 1024)
        let buffer = context.channel.allocator.buffer(bytes: archive[offset..<end])
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).assumeIsolated().whenSuccess {
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(4)) {
                self.writeArchive(context, from: end)
            }
        }
    }

    private func sendJSON(_ context: ChannelHandlerContext, _ status: HTTPResponseStatus, _ object: [String: Any]) {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        send(context, data, type: "application/json", status: status)
    }

    private func send(
        _ context: ChannelHandlerContext, _ data: Data, type: String, status: HTTPResponseStatus = .ok
    ) {
        let headers = HTTPHeaders([("Content-Type", type), ("Content-Length", "\(data.count)")])
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: data)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

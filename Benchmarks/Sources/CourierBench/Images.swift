import AsyncHTTPClient
import Courier
import CourierImageDecoding
import Foundation
import NIOCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Many images by one client, timed in-process:
/// `CourierBench images CLIENT --base URL --count N [--cache-mb M] [--active K]`.
///
/// Clients:
/// - `ahc`: raw AsyncHTTPClient fetching `<base>/<i>.png` for every `i`, at most K at once, bodies collected and
///   dropped: the baseline, downloads only.
/// - `courier`: ``ImageDownloader`` with K active downloads, an ``AutoPurgingImageCache`` of M MB (preferred size
///   after a purge: 60 % of it, as AFNetworking's ratio) and `SystemImageDecoder`: every image decoded to RGBA8.
/// - `courier-headers`: the same with the header-only decoder, to show the downloader's own cost.
///
/// `images.sh` runs each client in its own process so its peak RSS is its own. Prints `seconds=<s> images=<n>
/// cache=<bytes>`.
enum Images {
    static func main(_ arguments: [String]) async throws {
        guard let client = arguments.first else {
            throw BenchError(description: "usage: images ahc|courier|courier-headers --base URL --count N")
        }
        var base: URL?
        var count = 1000
        var cacheMB = 32
        var active = 4
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            let value = rest.popFirst()
            switch flag {
            case "--base": base = value.flatMap(URL.init(string:))
            case "--count": count = value.flatMap(Int.init) ?? count
            case "--cache-mb": cacheMB = value.flatMap(Int.init) ?? cacheMB
            case "--active": active = value.flatMap(Int.init) ?? active
            default: throw BenchError(description: "unknown argument \(flag)")
            }
        }
        guard let base else { throw BenchError(description: "--base is required") }
        let urls = (0..<count).map { base.appendingPathComponent("\($0).png") }
        let start = ContinuousClock.now
        var cached: UInt64 = 0
        switch client {
        case "ahc":
            try await ahc(urls, active: active)
        case "courier", "courier-headers":
            let cache = AutoPurgingImageCache(
                memoryCapacity: UInt64(cacheMB) << 20, preferredMemoryCapacityAfterPurge: UInt64(cacheMB) << 20 * 6 / 10
            )
            let decoder: any ImageDecoding = client == "courier" ? SystemImageDecoder() : ImageHeaderDecoder()
            try await courier(urls, active: active, cache: cache, decoder: decoder)
            cached = cache.memoryUsage
        default:
            throw BenchError(description: "unknown client \(client)")
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        print("seconds=\(seconds) images=\(count) cache=\(cached)")
    }

    static func courier(
        _ urls: [URL], active: Int, cache: AutoPurgingImageCache, decoder: any ImageDecoding
    ) async throws {
        var configuration = SessionConfiguration.ephemeral
        configuration.urlCache = nil
        let session = HTTPSessionManager(configuration: configuration, transport: NIOTransport())
        let downloader = ImageDownloader(
            session: session, maximumActiveDownloads: active, imageCache: cache, decoder: decoder,
            callbackQueue: DispatchQueue(label: "bench.images"))
        let pixels = try await withThrowingTaskGroup(of: Int.self) { group in
            for url in urls {
                group.addTask {
                    let image = try await downloader.image(for: URLRequest(url: url))
                    guard image.pixelWidth == 256, image.pixelHeight == 256 else {
                        throw BenchError(description: "\(url) is \(image.pixelWidth)×\(image.pixelHeight)")
                    }
                    return image.bitmap?.pixels.count ?? 0
                }
            }
            return try await group.reduce(0, +)
        }
        if decoder is SystemImageDecoder, pixels != urls.count * 256 * 256 * 4 {
            throw BenchError(description: "decoded \(pixels) bytes of pixels")
        }
        await session.transport.shutdown()
    }

    static func ahc(_ urls: [URL], active: Int) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = urls.makeIterator()
                func add() -> Bool {
                    guard let url = next.next() else { return false }
                    group.addTask {
                        let response = try await client.execute(
                            HTTPClientRequest(url: url.absoluteString), timeout: .seconds(60))
                        let body = try await response.body.collect(upTo: 16 << 20)
                        guard response.status == .ok, body.readableBytes > 0 else {
                            throw BenchError(description: "\(url): \(response.status)")
                        }
                    }
                    return true
                }
                for _ in 0..<active where add() {}
                while try await group.next() != nil { _ = add() }
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}

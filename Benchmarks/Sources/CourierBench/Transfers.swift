import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOFoundationCompat

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One large transfer by one client, timed in-process: `CourierBench transfer OPERATION CLIENT --url URL --file PATH`.
///
/// `transfers.sh` runs each (operation, client) in its own process so that the process's peak RSS belongs to that
/// transfer alone, and times curl the same way (`-w %{time_total}`). Prints `seconds=<s> bytes=<n>`.
enum Transfers {
    enum Operation: String {
        /// `PUT` the file as the body.
        case upload
        /// `GET` the URL into the file.
        case download
        /// `PUT` a multipart/form-data body with the file as its one file part (as `curl -X PUT -F file=@…`).
        case multipart
    }

    static func main(_ arguments: [String]) async throws {
        guard arguments.count >= 2, let operation = Operation(rawValue: arguments[0]) else {
            throw BenchError(
                description: "usage: transfer upload|download|multipart courier|ahc --url URL --file PATH"
                    + " (and: transfer download operation …)")
        }
        let client = arguments[1]
        var url: URL?
        var file: URL?
        var rest = arguments.dropFirst(2)
        while let flag = rest.popFirst() {
            switch flag {
            case "--url": url = rest.popFirst().flatMap(URL.init(string:))
            case "--file": file = rest.popFirst().map { URL(fileURLWithPath: $0) }
            default: throw BenchError(description: "unknown argument \(flag)")
            }
        }
        guard let url, let file else { throw BenchError(description: "--url and --file are required") }
        let start = ContinuousClock.now
        let bytes: Int64
        switch client {
        case "courier": bytes = try await courier(operation, url: url, file: file)
        case "ahc": bytes = try await ahc(operation, url: url, file: file)
        case "operation" where operation == .download: bytes = try await operationDownload(url: url, file: file)
        default: throw BenchError(description: "unknown client \(client)")
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        print("seconds=\(seconds) bytes=\(bytes)")
    }

    // MARK: Courier on NIOTransport

    static func courier(_ operation: Operation, url: URL, file: URL) async throws -> Int64 {
        let manager = SessionManager(configuration: .ephemeral, transport: NIOTransport())
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "bench.completion")
        defer { manager.invalidate(cancelingTasks: false) }
        var request = URLRequest(url: url)
        let outcome: (any Error)?
        switch operation {
        case .upload:
            request.httpMethod = "PUT"
            outcome = await complete { done in
                manager.uploadTask(with: request, fromFile: file, completionHandler: done)
            }
        case .download:
            outcome = await complete { done in
                manager.downloadTask(
                    with: request, destination: { _, _ in file }, options: [.removePreviousFile],
                    completionHandler: done)
            }
            let downloaded = try fileSize(file)
            guard downloaded > 0 else { throw BenchError(description: "empty download") }
            return downloaded
        case .multipart:
            outcome = try await courierMultipart(manager, url: url, file: file)
        }
        if let outcome { throw outcome }
        return try fileSize(file)
    }

    /// Resumes the task `make` returns and waits for its completion handler.
    static func complete(_ make: (@escaping TaskCompletionHandler) -> SessionTask) async -> (any Error)? {
        await withCheckedContinuation { continuation in
            make { _, _, error in continuation.resume(returning: error) }.resume()
        }
    }

    /// AFNetworking 2's way: an `HTTPRequestOperation` on an `OperationQueue`, its body written to an
    /// `OutputStream(toFileAtPath:append:)` as it arrives.
    static func operationDownload(url: URL, file: URL) async throws -> Int64 {
        let transport = NIOTransport()
        let operation = HTTPRequestOperation(request: URLRequest(url: url), transport: transport)
        operation.outputStream = OutputStream(toFileAtPath: file.path, append: false)
        let queue = OperationQueue()
        await withCheckedContinuation { continuation in
            operation.completionBlock = { continuation.resume() }
            queue.addOperation(operation)
        }
        await transport.shutdown()
        if let error = operation.error { throw error }
        return try fileSize(file)
    }

    // MARK: AsyncHTTPClient, used directly

    static func ahc(_ operation: Operation, url: URL, file: URL) async throws -> Int64 {
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        defer { _ = client.shutdown() }
        var request = HTTPClientRequest(url: url.absoluteString)
        switch operation {
        case .upload:
            let size = try fileSize(file)
            request.method = .PUT
            request.body = .stream(FileChunks(url: file), length: .known(size))
            let response = try await client.execute(request, timeout: .seconds(600))
            for try await _ in response.body {}
            guard (200..<300).contains(response.status.code) else {
                throw BenchError(description: "status \(response.status.code)")
            }
            return size
        case .download:
            let response = try await client.execute(request, timeout: .seconds(600))
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            var bytes: Int64 = 0
            for try await buffer in response.body {
                try handle.write(contentsOf: buffer.readableBytesView)
                bytes += Int64(buffer.readableBytes)
            }
            return bytes
        case .multipart:
            throw BenchError(description: "AsyncHTTPClient has no multipart encoder")
        }
    }

    static func fileSize(_ url: URL) throws -> Int64 {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? 0
    }
}

/// A file as 256 KiB `ByteBuffer`s, read as AsyncHTTPClient asks for them.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let url: URL

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(handle: try? FileHandle(forReadingFrom: url))
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle?

        mutating func next() async throws -> ByteBuffer? {
            guard let handle else { throw BenchError(description: "cannot open the file") }
            guard let data = try handle.read(upToCount: 256 * 1024), !data.isEmpty else { return nil }
            return ByteBuffer(data: data)
        }
    }
}

extension Transfers {
    /// The file as the one part of a multipart/form-data body, streamed.
    static func courierMultipart(_ manager: SessionManager, url: URL, file: URL) async throws -> (any Error)? {
        let multipart = try HTTPRequestSerializer().multipartRequest(method: "PUT", url: url) {
            try $0.append(fileURL: file, name: "file")
        }
        return await complete { done in manager.uploadTask(with: multipart, completionHandler: done) }
    }
}

import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A piece of the encoded body.
enum Segment: Sendable {
    case bytes(Data)
    case file(URL, length: Int64)
    case stream(@Sendable () throws -> DataChunks, length: Int64, name: String)
}

/// A file part's URL and the size its `Content-Length` was computed with.
struct FileCheck: Sendable {
    var url: URL
    var length: Int64
}

/// Everything a fresh pass over the body needs.
struct StreamPlan: Sendable {
    var segments: [Segment]
    var files: [FileCheck]
    var chunkSize: Int
    var delay: TimeInterval
}

/// One pass over the body, pulled one chunk at a time by a single consumer.
///
/// Not `Sendable`: it lives inside one iteration of ``DataChunks``, which is never shared between tasks.
final class MultipartStream {
    private let plan: StreamPlan
    private var index = 0
    private var offset = 0
    private var checkedFiles = false
    private var file: FileChunkReader?
    private var stream: DataChunks.AsyncIterator?
    private var leftover = Data()
    private var produced: Int64 = 0

    init(plan: StreamPlan) {
        self.plan = plan
    }

    func next() async throws -> Data? {
        guard let chunk = try await produce() else { return nil }
        if plan.delay > 0 { try await Task.sleep(nanoseconds: CheckedConversion.nanoseconds(plan.delay)) }
        return chunk
    }

    private func produce() async throws -> Data? {
        if !checkedFiles {
            checkedFiles = true
            // Before the first byte: a file that vanished or changed size since it was appended fails the upload
            // now, rather than after part of the body has gone out.
            for check in plan.files { try Self.verify(check) }
        }
        while index < plan.segments.count {
            switch plan.segments[index] {
            case .bytes(let data):
                if offset < data.count {
                    let start = data.index(data.startIndex, offsetBy: offset)
                    let count = min(plan.chunkSize, data.count - offset)
                    offset += count
                    return data.subdata(in: start..<data.index(start, offsetBy: count))
                }
            case .file(let url, let length):
                if let chunk = try await readFile(url, length: length) { return chunk }
            case .stream(let makeChunks, let length, let name):
                if !leftover.isEmpty { return takeLeftover() }
                if stream == nil { stream = try makeChunks().makeAsyncIterator() }
                if let chunk = try await stream?.next() {
                    produced += Int64(chunk.count)
                    guard produced <= length else {
                        throw Self.lengthMismatch(name, declared: length, produced: produced)
                    }
                    leftover = chunk
                    continue
                }
                guard produced == length else { throw Self.lengthMismatch(name, declared: length, produced: produced) }
                stream = nil
            }
            advance()
        }
        return nil
    }

    /// Up to a chunk of what a stream handed over, so a stream's large chunks are cut to size too.
    private func takeLeftover() -> Data {
        guard leftover.count > plan.chunkSize else {
            defer { leftover = Data() }
            return leftover
        }
        let cut = leftover.index(leftover.startIndex, offsetBy: plan.chunkSize)
        defer { leftover = leftover.subdata(in: cut..<leftover.endIndex) }
        return leftover.subdata(in: leftover.startIndex..<cut)
    }

    private func readFile(_ url: URL, length: Int64) async throws -> Data? {
        if file == nil {
            do {
                file = try FileChunkReader(url: url, chunkSize: plan.chunkSize, expectedLength: length)
            } catch {
                throw CourierError.multipartEncodingFailed(
                    reason: "File URL not reachable.", fileURL: url, underlyingError: error)
            }
        }
        let chunk: Data?
        do {
            if let file {
                chunk = try await BlockingIO.run { try file.next() }
            } else {
                chunk = nil
            }
        } catch let error as FileChangedError {
            throw Self.changed(url, expected: error.expected, read: error.read)
        } catch {
            throw CourierError.fileOperationFailed(
                reason: "The file \(url.path) could not be read.", underlyingError: error,
                context: CourierError.Context())
        }
        if chunk == nil { file = nil }
        return chunk
    }

    private func advance() {
        index += 1
        offset = 0
        produced = 0
    }

    private static func verify(_ check: FileCheck) throws {
        let length = try MultipartFormData.fileLength(of: check.url)
        guard length == check.length else { throw changed(check.url, expected: check.length, read: length) }
    }

    private static func changed(_ url: URL, expected: Int64, read: Int64) -> CourierError {
        let error = FileChangedError(url: url, expected: expected, read: read)
        return .fileOperationFailed(reason: error.description, underlyingError: error, context: CourierError.Context())
    }

    private static func lengthMismatch(_ name: String, declared: Int64, produced: Int64) -> CourierError {
        .multipartEncodingFailed(
            reason: "The stream of the part “\(name)” was declared as \(declared) bytes but produced "
                + (produced > declared ? "more." : "\(produced)."),
            fileURL: nil, underlyingError: nil)
    }
}

/// Single bytes from an async sequence, gathered into chunks.
struct ByteBatches<Bytes: AsyncSequence & Sendable>: AsyncSequence, Sendable where Bytes.Element == UInt8 {
    typealias Element = Data
    let bytes: Bytes
    let size: Int

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: bytes.makeAsyncIterator(), size: Swift.max(1, size))
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Bytes.AsyncIterator
        let size: Int

        mutating func next() async throws -> Data? {
            var batch = Data()
            while batch.count < size, let byte = try await base.next() { batch.append(byte) }
            return batch.isEmpty ? nil : batch
        }
    }
}

import Foundation

extension HTTPRequestBody {
    /// Why ``write(to:)`` stopped.
    enum WriteFailure: Error {
        /// Making or reading the body's chunks failed with this error.
        case reading(any Error)
        /// Writing to the file failed with this error.
        case writing(any Error)
    }

    /// Writes the body's chunks to `handle` in order, in constant memory: the one way a body becomes a file, for a
    /// multipart body written out and for a transport that uploads from a file.
    ///
    /// Each write runs on the blocking-I/O pool (``BlockingIO``), never on Swift's cooperative pool. Stops at the
    /// next chunk once the calling Swift task is cancelled.
    ///
    /// - Throws: ``WriteFailure``, or `CancellationError`.
    func write(to handle: FileHandle) async throws {
        let chunks: DataChunks
        do {
            chunks = try makeChunks()
        } catch {
            throw WriteFailure.reading(error)
        }
        var iterator = chunks.makeAsyncIterator()
        while true {
            try Task.checkCancellation()
            let chunk: Data?
            do {
                chunk = try await iterator.next()
            } catch {
                throw WriteFailure.reading(error)
            }
            guard let chunk else { return }
            do {
                try await BlockingIO.run { try handle.write(contentsOf: chunk) }
            } catch {
                throw WriteFailure.writing(error)
            }
        }
    }
}

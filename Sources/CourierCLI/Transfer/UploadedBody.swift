import Foundation

/// The response body of an upload: in memory, or in the file the library wrote it to.
///
/// `courier` asks the library to write an upload's response to a file (``ResponseDisposition/becomeDownload``), so
/// a server answering a multipart upload with a huge body cannot fill the memory. The library deletes that file once
/// its completion handler returns; the handle opened in the handler keeps its bytes readable until it is closed.
enum UploadedBody: Sendable {
    /// A body kept in memory (the response was not redirected to a file).
    case data(Data)
    /// A body in an already deleted file, read through this open handle.
    case file(FileHandle)

    /// The size of the pieces a file is read in.
    static let chunkSize = 256 * 1024

    /// The body's bytes in pieces; a file is read on ``BlockingIO``'s queue and closed at its end.
    func chunks() -> AsyncThrowingStream<Data, any Error> {
        switch self {
        case .data(let data):
            return AsyncThrowingStream { continuation in
                continuation.yield(data)
                continuation.finish()
            }
        case .file(let handle):
            return AsyncThrowingStream {
                try await BlockingIO.run {
                    let piece = try handle.read(upToCount: Self.chunkSize) ?? Data()
                    if piece.isEmpty { try? handle.close() }
                    return piece.isEmpty ? nil : piece
                }
            }
        }
    }
}

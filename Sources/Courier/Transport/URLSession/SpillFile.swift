import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A temporary file holding response bytes the consumer has not pulled yet; unlinked as soon as it is made, so it
/// disappears when the last reference closes it, whatever happens to the process.
///
/// `Sendable`: the descriptor never changes, and `pread`/`pwrite` take explicit offsets, so the writer (the delegate
/// queue) and the reader (the consumer) never share a file position; the delegate only lets the reader read bytes
/// already written.
final class SpillFile: Sendable {
    private let descriptor: Int32

    init() throws {
        let directory = TemporaryFiles.directory ?? FileManager.default.temporaryDirectory
        let path = directory.appendingPathComponent("Courier-body-XXXXXX").path
        var template = Array(path.utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            let descriptor = mkstemp(base)
            if descriptor >= 0 { unlink(base) }
            return descriptor
        }
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    func write(_ data: Data, at offset: Int64) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard let base = buffer.baseAddress else { return }
            var written = 0
            while written < buffer.count {
                let result = pwrite(descriptor, base + written, buffer.count - written, off_t(offset) + off_t(written))
                if result < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                written += result
            }
        }
    }

    func read(count: Int, at offset: Int64) throws -> Data {
        var data = Data(count: count)
        let read = try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var read = 0
            while read < count {
                let result = pread(descriptor, base + read, count - read, off_t(offset) + off_t(read))
                if result < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                if result == 0 { break }
                read += result
            }
            return read
        }
        guard read == count else { throw POSIXError(.EIO) }
        return data
    }
}

import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The file a download task writes its body to, through its whole life: planned when the task is made (no file
/// system call then, since the caller may be on the cooperative pool), opened when the task runs, continued from
/// resume data or started over, written chunk by chunk, emptied when the server sends the whole resource again,
/// and at the end either finished (closed, for the session to validate and move) or abandoned (deleted, or kept and
/// described as resume data).
///
/// Every file system call runs on ``BlockingIO``'s threads; the state is behind one lock, never held across one.
/// Invariant: a file is open (`handle` set) only between ``open()`` (or ``begin()``) and ``finish()`` or
/// ``abandon(request:response:)``, and ``length`` counts exactly the bytes in it.
final class DownloadFile: Sendable {
    /// The file a download will write.
    enum Plan: Sendable {
        /// A new temporary file.
        case new
        /// The partial file of resume data.
        case continuing(DownloadResumeData)
    }

    private struct State {
        var handle: FileHandle?
        var url: URL?
        /// Noted by ``plan(_:)``, opened by ``open()``.
        var planned: Plan?
        /// Bytes in the file, including those a resumed download started with.
        var length: Int64 = 0
        /// Where a resumed download continues; 0 once it starts over.
        var resumeOffset: Int64 = 0
        /// Set by ``DownloadTask/cancel(producingResumeData:)``: keep the partial file and describe it.
        var resumeDataHandler: (@Sendable (Data?) -> Void)?

        /// Whether there is a file, planned or opened.
        var hasFile: Bool { url != nil || planned != nil }
    }

    private let state = Locked(State())
    /// Told the offset the download's progress starts from, whenever that changes (resume data, a restart).
    private let progressStarts: @Sendable (Int64) -> Void

    init(progressStarts: @escaping @Sendable (Int64) -> Void) {
        self.progressStarts = progressStarts
    }

    /// Whether the task writes its body to a file (planned or open).
    var isDownload: Bool { state.withLock { $0.hasFile } }

    /// The file's URL once it has been opened (it stays set after the file is closed or deleted).
    var url: URL? { state.withLock { $0.url } }

    /// Where a resumed download continues; 0 when it starts from the beginning.
    var resumeOffset: Int64 {
        get { state.withLock { $0.resumeOffset } }
        set { state.withLock { $0.resumeOffset = newValue } }
    }

    /// The open file and the bytes in it; `nil` when none is open.
    var written: (url: URL, length: Int64)? {
        state.withLock { state in state.handle == nil ? nil : state.url.map { ($0, state.length) } }
    }

    /// Notes which file the download will write; nothing is opened yet. Progress already counts the bytes a resumed
    /// download starts with, as once the file is open.
    func plan(_ plan: Plan) {
        state.withLock { $0.planned = plan }
        if case .continuing(let resumeData) = plan, resumeData.bytesOnDisk >= 0 {
            progressStarts(resumeData.bytesOnDisk)
        }
    }

    /// Opens the planned file, if any. The work finishes even when the task is cancelled meanwhile, so the file is
    /// then abandoned (deleted, or kept for resume data) as a file opened earlier would be.
    ///
    /// - Returns: `false` when resume data named a partial file that cannot be continued, so the download starts
    ///   over in a new file and its request must not ask for a range; `true` otherwise.
    func open() async throws -> Bool {
        switch state.withLock({ $0.planned }) {
        case nil: return true
        case .new:
            try await begin()
            return true
        case .continuing(let resumeData): return try await `continue`(resumeData) > 0
        }
    }

    /// Starts writing to a new temporary file (mode 0600, in ``TemporaryFiles``).
    func begin() async throws {
        do {
            let (url, handle) = try await BlockingIO.runToCompletion { try TemporaryFiles.makeFile(prefix: "Courier") }
            state.withLock { state in
                state.planned = nil
                state.handle = handle
                state.url = url
                state.length = 0
            }
        } catch {
            state.withLock { $0.planned = nil }
            throw error
        }
    }

    /// What ``continue(_:)`` found on disk.
    private enum PartialFile: Sendable {
        /// The partial file, open and cut to the resume data's length, positioned at its end.
        case continued(FileHandle)
        /// Resume data naming a file that is not Courier's, or one missing or shorter than it says (then deleted).
        case unusable
    }

    /// Continues the partial file of `resumeData`; returns the bytes kept (0 when the file is missing or shorter than
    /// the resume data says, and the download starts over in a new file).
    private func `continue`(_ resumeData: DownloadResumeData) async throws -> Int64 {
        let found: PartialFile
        do {
            found = try await BlockingIO.runToCompletion { try Self.openPartialFile(resumeData) }
        } catch {
            state.withLock { $0.planned = nil }  // as a file that failed to open was never noted
            throw error
        }
        guard case .continued(let handle) = found else {
            progressStarts(0)
            try await begin()
            return 0
        }
        state.withLock { state in
            state.planned = nil
            state.handle = handle
            state.url = resumeData.temporaryFileURL
            state.length = resumeData.bytesOnDisk
            state.resumeOffset = resumeData.bytesOnDisk
        }
        progressStarts(resumeData.bytesOnDisk)
        return resumeData.bytesOnDisk
    }

    /// Opens the partial file of `resumeData` for appending; blocking, so called on ``BlockingIO``'s threads.
    private static func openPartialFile(_ resumeData: DownloadResumeData) throws -> PartialFile {
        let url = resumeData.temporaryFileURL
        // Resume data is only bytes: it may name any file. Only Courier's own temporary files are continued (and
        // truncated), never a file elsewhere.
        guard TemporaryFiles.isOwnFile(url) else { return .unusable }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
        // Resume data may come from anywhere: a negative offset must start over, not trap below.
        guard let size, resumeData.bytesOnDisk >= 0, size >= resumeData.bytesOnDisk,
            let handle = try? FileHandle(forWritingTo: url)
        else {
            try? FileManager.default.removeItem(at: url)
            return .unusable
        }
        try handle.truncate(atOffset: UInt64(resumeData.bytesOnDisk))
        try handle.seek(toOffset: UInt64(resumeData.bytesOnDisk))
        return .continued(handle)
    }

    /// Appends `chunk` to the open file; `false` (nothing written) when none is open.
    func write(_ chunk: Data) async throws -> Bool {
        guard let handle = state.withLock({ $0.handle }) else { return false }
        try await BlockingIO.run { try handle.write(contentsOf: chunk) }
        state.withLock { $0.length += Int64(chunk.count) }
        return true
    }

    /// Empties the file: the server sent the whole resource instead of the rest of it.
    func restart() async throws {
        if let handle = state.withLock({ $0.handle }) {
            try await BlockingIO.run {
                try handle.truncate(atOffset: 0)
                try handle.seek(toOffset: 0)
            }
        }
        state.withLock { state in
            state.length = 0
            state.resumeOffset = 0
        }
        progressStarts(0)
    }

    /// Closes the file (outside the lock) and returns its URL; `nil` when none was opened.
    func finish() -> URL? {
        let (handle, url) = state.withLock { state in
            defer { state.handle = nil }
            return (state.handle, state.url)
        }
        try? handle?.close()
        return url
    }

    /// Keeps the partial file when resume data was asked for and can be made; otherwise deletes it. Calls the
    /// resume-data handler, if any, exactly once.
    func abandon(request: URLRequest?, response: HTTPURLResponse?) {
        let (handler, length, planned) = state.withLock { state in
            defer {
                state.resumeDataHandler = nil
                state.planned = nil
            }
            return (state.resumeDataHandler, state.length, state.planned)
        }
        guard let url = finish() else {
            // Never opened (the task did not run): a resumed download's partial file goes as an opened one would,
            // since without a response there is no resume data to keep it for.
            if case .continuing(let resumeData) = planned, TemporaryFiles.isOwnFile(resumeData.temporaryFileURL) {
                try? FileManager.default.removeItem(at: resumeData.temporaryFileURL)
            }
            handler?(nil)
            return
        }
        let resumeData =
            handler == nil
            ? nil : DownloadResumeData.make(request: request, response: response, file: url, bytesOnDisk: length)
        if resumeData == nil { try? FileManager.default.removeItem(at: url) }
        handler?(resumeData?.encoded())
    }

    /// Asks for resume data when the task ends by cancellation; `false` if the task is not a download.
    func wantResumeData(_ handler: @escaping @Sendable (Data?) -> Void) -> Bool {
        state.withLock { state in
            guard state.hasFile, state.resumeDataHandler == nil else { return false }
            state.resumeDataHandler = handler
            return true
        }
    }

    /// Calls a pending resume-data handler with `nil`: the download finished after all.
    func dropResumeDataRequest() {
        state.withLock { state in
            defer { state.resumeDataHandler = nil }
            return state.resumeDataHandler
        }?(nil)
    }

    /// Deletes the file, if it is still there.
    func remove() {
        if let url = finish() { try? FileManager.default.removeItem(at: url) }
    }

    /// Moves a finished file to `destination` as `options` say; blocking, so called on ``BlockingIO``'s threads.
    static func move(_ file: URL, to destination: URL, options: DownloadOptions) throws {
        let manager = FileManager.default
        if options.contains(.createIntermediateDirectories) {
            try manager.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        if options.contains(.removePreviousFile), manager.fileExists(atPath: destination.path) {
            try manager.removeItem(at: destination)
        }
        try manager.moveItem(at: file, to: destination)
    }
}

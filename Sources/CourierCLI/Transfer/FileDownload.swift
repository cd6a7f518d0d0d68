import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `--download`, `--output` and `--continue`: the body is written to the file as it arrives, so an interrupted
/// download leaves a partial file that `--continue` picks up.
///
/// Resuming asks for `Range: bytes=<size of the file>-`. A `206` whose `Content-Range` starts there is appended;
/// a `200` (the server ignores ranges) replaces the file from the start; a `416` for a file that already has the
/// whole resource reports it complete. A response that is not 2xx is not saved.
struct FileDownload {
    let manager: SessionManager
    var request: URLRequest
    let options: SaveOptions
    let console: Console
    let printHead: (HTTPURLResponse) -> Void

    init(
        manager: SessionManager, request: URLRequest, options: SaveOptions, console: Console,
        printHead: @escaping (HTTPURLResponse) -> Void
    ) {
        self.manager = manager
        self.request = request
        self.options = options
        self.console = console
        self.printHead = printHead
    }

    func run() async throws -> ExitStatus {
        var request = request
        // Resuming needs the name before the response: from --output, else from the URL.
        var path = options.output ?? (options.resume ? request.url.map(Self.fileName(from:)) : nil)
        var offset: Int64 = 0
        if options.resume, let path, let size = Self.size(of: path), size > 0 {
            offset = size
            request.setValue("bytes=\(size)-", forHTTPHeaderField: "Range")
        }
        let streamed = try await manager.stream(request, acceptableStatusCodes: nil)
        let response = streamed.response
        printHead(response)

        var append = false
        switch response.statusCode {
        case 206 where offset > 0:
            let start = Self.contentRangeStart(response)
            guard start == offset else {
                streamed.task.cancel()
                throw CommandFailure(
                    .failure,
                    "cannot resume \(path ?? ""): asked for bytes from \(offset) but the server sent "
                        + "Content-Range: \(response.value(forHTTPHeaderField: "Content-Range") ?? "none")")
            }
            append = true
        case 416 where offset > 0:
            streamed.task.cancel()
            if Self.completeLength(response) == offset {
                console.err("courier: \(path ?? "") is already complete (\(offset) bytes)\n")
                return .success
            }
            throw CommandFailure(
                .failure,
                "cannot resume \(path ?? ""): the server has no bytes after \(offset) (416 Range Not Satisfiable, "
                    + "Content-Range: \(response.value(forHTTPHeaderField: "Content-Range") ?? "none"))")
        case 200..<300:
            if offset > 0 {
                console.err("courier: the server ignored the range request (\(response.statusCode)); starting over\n")
            }
            offset = 0
        default:
            var body = Data()
            for try await chunk in streamed.chunks where body.count < 4096 { body.append(chunk) }
            var text = String(decoding: body.prefix(4096), as: UTF8.self)
            if (300..<400).contains(response.statusCode),
                let location = response.value(forHTTPHeaderField: "Location")
            {
                text = "redirected to \(location): add --follow to follow redirects"
            }
            throw CommandFailure(
                ExitStatus.checking(statusCode: response.statusCode) == .success
                    ? .failure : ExitStatus.checking(statusCode: response.statusCode),
                "download not saved: HTTP \(response.statusCode) \(MessageFormatter.reason(response.statusCode)) "
                    + "from \(response.url?.absoluteString ?? "")" + (text.isEmpty ? "" : "\n\(text)"))
        }

        if path == nil {
            path = Self.uniquePath(Self.fileName(for: response, request: request))
        }
        guard let path else { throw CommandFailure(.failure, "no file name for the download") }
        let handle = try Self.open(path, append: append)
        defer { try? handle.close() }

        let length = Int64(response.value(forHTTPHeaderField: "Content-Length") ?? "") ?? -1
        let total = length >= 0 ? offset + length : -1
        let bar = ProgressBar(console: console, label: (path as NSString).lastPathComponent)
        var written: Int64 = 0
        let started = ContinuousClock.now
        do {
            for try await chunk in streamed.chunks {
                try handle.write(contentsOf: chunk)
                written += Int64(chunk.count)
                bar.update(progress(offset: offset, written: written, total: total, task: streamed.task))
            }
        } catch {
            bar.abandon()
            let kept = offset + written
            let note = "; \(kept) bytes kept in \(path), resume with --continue"
            if let failure = error as? CommandFailure { throw CommandFailure(failure.status, failure.message + note) }
            let failure = CommandFailure(
                error: error, request: request, timeout: manager.configuration.timeoutIntervalForRequest,
                maximumRedirects: manager.configuration.maximumRedirects)
            throw CommandFailure(failure.status, failure.message + note)
        }
        var final = progress(offset: offset, written: written, total: offset + written, task: streamed.task)
        final.estimatedTimeRemaining = 0
        bar.update(final, final: true)
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let resumed = append ? ", resumed at byte \(offset)" : ""
        console.err(
            "courier: saved \(path): \(offset + written) bytes (\(ProgressBar.byteCount(offset + written)))"
                + "\(resumed) in \(String(format: "%.2f", seconds)) s\n")
        return .success
    }

    /// The library's progress for this transfer (rate and time left), counted from the start of the file.
    private func progress(offset: Int64, written: Int64, total: Int64, task: SessionTask) -> TaskProgress {
        let measured = manager.downloadProgress(for: task)
        return TaskProgress(
            completed: offset + written, total: total, throughput: measured?.throughput ?? 0,
            estimatedTimeRemaining: measured?.estimatedTimeRemaining)
    }

    // MARK: Files

    static func size(of path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }

    static func open(_ path: String, append: Bool) throws -> FileHandle {
        do {
            if append {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
                try handle.seekToEnd()
                return handle
            }
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission)
            }
            return try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        } catch {
            throw CommandFailure(.failure, "cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// `path`, or `path-1`, `path-2`… when it exists (a name from the server never overwrites a file).
    static func uniquePath(_ path: String) -> String {
        guard FileManager.default.fileExists(atPath: path) else { return path }
        var index = 1
        while FileManager.default.fileExists(atPath: "\(path)-\(index)") { index += 1 }
        return "\(path)-\(index)"
    }

    // MARK: Names

    /// The name from `Content-Disposition` (`filename*=UTF-8''…` or `filename="…"`), else from the URL.
    static func fileName(for response: HTTPURLResponse, request: URLRequest) -> String {
        if let disposition = response.value(forHTTPHeaderField: "Content-Disposition"),
            let name = fileName(fromContentDisposition: disposition)
        {
            return name
        }
        return (response.url ?? request.url).map(fileName(from:)) ?? "download"
    }

    static func fileName(fromContentDisposition header: String) -> String? {
        var plain: String?
        for parameter in header.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let lower = parameter.lowercased()
            if lower.hasPrefix("filename*="), let quote = parameter.range(of: "''") {
                if let decoded = String(parameter[quote.upperBound...]).removingPercentEncoding {
                    return safeName(decoded)
                }
            } else if lower.hasPrefix("filename=") {
                var value = String(parameter.dropFirst("filename=".count))
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                    value = String(value.dropFirst().dropLast())
                }
                plain = value
            }
        }
        return plain.flatMap(safeName)
    }

    /// The last path component of the URL, or `index` for `/`.
    static func fileName(from url: URL) -> String {
        safeName(url.lastPathComponent) ?? "index"
    }

    /// A name without folders or a leading dot, so a server cannot write outside the current folder.
    static func safeName(_ name: String) -> String? {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let trimmed = String(last.drop(while: { $0 == "." }))
        return trimmed.isEmpty ? nil : trimmed
    }

    // MARK: Content-Range

    /// `bytes 100-199/200` → 100.
    static func contentRangeStart(_ response: HTTPURLResponse) -> Int64? {
        guard let value = response.value(forHTTPHeaderField: "Content-Range"), value.hasPrefix("bytes ") else {
            return nil
        }
        return value.dropFirst(6).split(separator: "-").first.flatMap { Int64($0) }
    }

    /// `bytes */200` or `bytes 0-9/200` → 200.
    static func completeLength(_ response: HTTPURLResponse) -> Int64? {
        guard let value = response.value(forHTTPHeaderField: "Content-Range") else { return nil }
        return value.split(separator: "/").last.flatMap { Int64($0) }
    }
}

import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `--download`, `--output` and `--continue`: the body is written to the file as it arrives, so an interrupted
/// download leaves a partial file that `--continue` picks up.
///
/// Resuming asks for `Range: bytes=<size of the file>-`. A `206` whose `Content-Range` starts there, is well
/// formed (`start ≤ end < total`) and agrees with the body's length is appended, and no byte past its end is;
/// a `200` (the server ignores ranges) replaces the file from the start; a `416` for a file that already has the
/// whole resource reports it complete. A response that is not 2xx is not saved: its first 4 KiB are shown and the
/// rest is not read. The file is opened in place (see ``OutputFile``); a name from the server never overwrites a
/// file that exists.
struct FileDownload {
    let manager: SessionManager
    var request: URLRequest
    let options: SaveOptions
    let console: Console
    let limits: TransferLimits
    let printHead: (HTTPURLResponse, String?) -> Void

    /// How much of an error body is shown (and read).
    static let errorBodyLimit = 4096

    init(
        manager: SessionManager, request: URLRequest, options: SaveOptions, console: Console, limits: TransferLimits,
        printHead: @escaping (HTTPURLResponse, String?) -> Void
    ) {
        self.manager = manager
        self.request = request
        self.options = options
        self.console = console
        self.limits = limits
        self.printHead = printHead
    }

    func run() async throws -> ExitStatus {
        var request = request
        // Resuming needs the name before the response: from --output, else from the URL.
        var path = options.output ?? (options.resume ? request.url.map(Self.fileName(from:)) : nil)
        var offset: Int64 = 0
        if options.resume, let path, let size = await OutputFile.regularFileSize(path), size > 0 {
            offset = size
            request.setValue("bytes=\(size)-", forHTTPHeaderField: "Range")
        }
        let streamed = try await manager.stream(request, acceptableStatusCodes: nil)
        let response = streamed.response
        printHead(response, streamed.task.httpVersion)

        var mode = OutputFile.Mode.replace
        // The bytes a 206 promises; the body may bring neither more nor fewer.
        var rangeLength: Int64?
        switch response.statusCode {
        case 206 where offset > 0:
            let range = ContentRange(response.value(forHTTPHeaderField: "Content-Range") ?? "")
            let declared = response.value(forHTTPHeaderField: "Content-Length").map { Int64($0) }
            guard let range, range.start == offset, declared == nil || declared == range.length else {
                streamed.task.cancel()
                throw CommandFailure(
                    .failure,
                    "cannot resume \(path ?? ""): asked for bytes from \(offset) but the server sent "
                        + "Content-Range: \(response.value(forHTTPHeaderField: "Content-Range") ?? "none")"
                        + (response.value(forHTTPHeaderField: "Content-Length").map { " with Content-Length: \($0)" }
                            ?? "")
                        + (range.map { Self.rangeProblem($0, offset: offset, declared: declared ?? nil) } ?? ""))
            }
            rangeLength = range.length
            mode = .append
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
            throw try await notSaved(streamed)
        }

        let length = Int64(response.value(forHTTPHeaderField: "Content-Length") ?? "") ?? -1
        var total: Int64 = -1
        if length >= 0 {
            // A hostile Content-Length (2^63 - 1 after a resumed offset) must not overflow.
            let (sum, overflow) = offset.addingReportingOverflow(length)
            guard !overflow else {
                streamed.task.cancel()
                throw CommandFailure(
                    .failure,
                    "cannot resume \(path ?? ""): the server announced Content-Length: \(length) after byte "
                        + "\(offset), more bytes than a file can hold")
            }
            total = sum
        }

        let file = try await openFile(path: &path, mode: mode, response: response, request: request)
        let bar = ProgressBar(console: console, label: (file.path as NSString).lastPathComponent)
        var written: Int64 = 0
        let started = ContinuousClock.now
        do {
            for try await chunk in streamed.chunks {
                if let rangeLength, Int64(chunk.count) > rangeLength - written {
                    // Only what the range announced is appended: the rest would land at offsets it never named.
                    try await file.write(chunk.prefix(Int(rangeLength - written)))
                    written = rangeLength
                    streamed.task.cancel()
                    throw CommandFailure(
                        .failure,
                        "cannot resume \(path ?? ""): the server sent more than the \(rangeLength) bytes of its "
                            + "Content-Range: \(response.value(forHTTPHeaderField: "Content-Range") ?? "")")
                }
                try await file.write(chunk)
                written = Self.adding(written, Int64(chunk.count))
                bar.update(progress(offset: offset, written: written, total: total, task: streamed.task))
            }
            if let rangeLength, written != rangeLength {
                throw CommandFailure(
                    .failure,
                    "cannot resume \(path ?? ""): the body ended after \(written) of the \(rangeLength) bytes of its "
                        + "Content-Range: \(response.value(forHTTPHeaderField: "Content-Range") ?? "")")
            }
            try await file.flush()
        } catch {
            bar.abandon()
            await file.close()
            let kept = Self.adding(offset, written)
            let note = file.isStream ? "" : "; \(kept) bytes kept in \(file.path), resume with --continue"
            if let failure = error as? CommandFailure { throw CommandFailure(failure.status, failure.message + note) }
            let failure = CommandFailure(error: error, request: request, limits: limits)
            throw CommandFailure(failure.status, failure.message + note)
        }
        await file.close()
        let size = Self.adding(offset, written)
        var final = progress(offset: offset, written: written, total: size, task: streamed.task)
        final.estimatedTimeRemaining = 0
        bar.update(final, final: true)
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let resumed = mode == .append ? ", resumed at byte \(offset)" : ""
        console.err(
            "courier: saved \(file.path): \(size) bytes (\(ProgressBar.byteCount(size)))"
                + "\(resumed) in \(String(format: "%.2f", seconds)) s\n")
        return .success
    }

    /// Opens `--output`, or a new file named from the response that does not exist yet.
    private func openFile(path: inout String?, mode: OutputFile.Mode, response: HTTPURLResponse, request: URLRequest)
        async throws -> OutputFile
    {
        if let given = path,
            let file = try await OutputFile.open(given, mode: mode, deadline: OutputFile.Deadline(limits))
        {
            return file
        }
        // The name is the server's: `name`, else `name-1`, `name-2`… each created only if it does not exist, so an
        // existing file is never overwritten, even one that appears between the check and the open.
        let base = Self.fileName(for: response, request: request)
        for index in 0..<1000 {
            let candidate = index == 0 ? base : "\(base)-\(index)"
            if let file = try await OutputFile.open(
                candidate, mode: .createNew, deadline: OutputFile.Deadline(limits))
            {
                path = candidate
                return file
            }
        }
        throw CommandFailure(.failure, "no free file name for the download: \(base) and \(base)-1…999 all exist")
    }

    /// The failure for a response that is not saved, with the start of its body; the rest is never read (a
    /// hostile server may send an error body that never ends).
    private func notSaved(_ streamed: StreamedResponse) async throws -> CommandFailure {
        let response = streamed.response
        var body = Data()
        do {
            for try await chunk in streamed.chunks {
                body.append(chunk.prefix(Self.errorBodyLimit - body.count))
                if body.count >= Self.errorBodyLimit { break }
            }
        } catch {
            // What arrived before the failure is shown; the status is the news.
        }
        streamed.task.cancel()
        var text = String(decoding: body, as: UTF8.self)
        if (300..<400).contains(response.statusCode), let location = response.value(forHTTPHeaderField: "Location") {
            text = "redirected to \(location): add --follow to follow redirects"
        }
        let checked = ExitStatus.checking(statusCode: response.statusCode)
        return CommandFailure(
            checked == .success ? .failure : checked,
            "download not saved: HTTP \(response.statusCode) \(MessageFormatter.reason(response.statusCode)) "
                + "from \(response.url?.absoluteString ?? "")" + (text.isEmpty ? "" : "\n\(text)"))
    }

    /// The library's progress for this transfer (rate and time left), counted from the start of the file.
    private func progress(offset: Int64, written: Int64, total: Int64, task: SessionTask) -> TaskProgress {
        let measured = manager.downloadProgress(for: task)
        return TaskProgress(
            completed: Self.adding(offset, written), total: total, throughput: measured?.throughput ?? 0,
            estimatedTimeRemaining: measured?.estimatedTimeRemaining)
    }

    /// `a + b`, stopping at `Int64.max` rather than trapping (only for counts shown, never for offsets sent).
    static func adding(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
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
                if let decoded = String(parameter[quote.upperBound...]).removingPercentEncoding,
                    let name = safeName(decoded)
                {
                    return name
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

    /// The longest name kept, in UTF-8 bytes: file systems refuse names past 255 bytes, and `-1`… is appended.
    static let longestName = 200

    /// A name without folders, a leading dot or control characters, so a server can neither write outside the
    /// current folder, nor hide the file, nor put escape sequences or line breaks in its name (and in the messages
    /// that print it). A name starting with `-` gets `_` in front, so that a later `rm *` or `tar cf x *` in that
    /// folder cannot read it as an option (`-rf`, `--checkpoint-action=…`).
    static func safeName(_ name: String) -> String? {
        let clean = TerminalText.removingControls(name)
        let last = clean.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var trimmed = String(last.drop(while: { $0 == "." || $0 == " " }))
        if trimmed.hasPrefix("-") { trimmed = "_" + trimmed }
        while trimmed.utf8.count > longestName { trimmed.removeLast() }
        return trimmed.isEmpty ? nil : trimmed
    }

    // MARK: Content-Range

    /// Why `range` does not continue a file of `offset` bytes, for the message.
    private static func rangeProblem(_ range: ContentRange, offset: Int64, declared: Int64?) -> String {
        if range.start != offset { return " (it starts at byte \(range.start))" }
        if let declared, declared != range.length {
            return " (the range holds \(range.length) bytes, the body \(declared))"
        }
        return ""
    }

    /// `bytes */200` or `bytes 0-9/200` → 200.
    static func completeLength(_ response: HTTPURLResponse) -> Int64? {
        guard let value = response.value(forHTTPHeaderField: "Content-Range") else { return nil }
        return value.split(separator: "/").last.flatMap { Int64($0) }
    }
}

import Courier
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The whole request body, given as `--raw TEXT`, `@FILE` or redirected standard input instead of data fields, by
/// HTTPie's rules.
///
/// Standard input is the body when it is redirected, the request has no data fields, `--raw` or `@FILE`, and it
/// holds bytes: an empty one (`</dev/null`, what cron and CI runners give) is no body, so a script with data fields
/// keeps working without `--ignore-stdin`. Standard input that has bytes beside another body is refused rather than
/// dropped. A file (`@FILE`, or standard input redirected from one) is streamed from disk with its length; a pipe is
/// streamed as it comes (chunked).
enum RawBody: Sendable {
    /// `--raw TEXT`.
    case text(String)
    /// `@FILE`, or standard input redirected from a file; the type is guessed from the extension for `@FILE` only.
    case file(path: String, guessesType: Bool)
    /// Standard input from a pipe, with the bytes already read to find out whether it had any.
    case pipe(first: Data)

    /// What standard input is, without reading it.
    enum Input: Sendable, Hashable {
        /// A terminal: never a body.
        case terminal
        /// A regular file with this many bytes left to read.
        case file(remaining: Int64)
        /// A pipe, socket or device; `ready` when it can be read (data, or its end) without waiting.
        case stream(ready: Bool)

        /// Standard input as it is now.
        static func current() -> Input {
            if isatty(STDIN_FILENO) == 1 { return .terminal }
            var status = stat()
            if fstat(STDIN_FILENO, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG {
                let offset = lseek(STDIN_FILENO, 0, SEEK_CUR)
                return .file(remaining: Int64(status.st_size) - Int64(max(offset, 0)))
            }
            var poller = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            return .stream(ready: poll(&poller, 1, 0) > 0)
        }
    }

    /// The largest piece of a pipe read at once.
    static let chunkSize = 256 * 1024

    /// The body the options and standard input make, if any.
    ///
    /// - Parameters:
    ///   - raw: `--raw`'s text.
    ///   - file: the path of an `@FILE` argument.
    ///   - hasDataFields: whether the request has data or file fields.
    ///   - ignoresInput: `--ignore-stdin`.
    ///   - input: standard input (``Input/current()`` outside tests); `readPipe` reads its first bytes, blocking
    ///     until they come or the pipe ends.
    /// - Throws: ``CommandFailure`` when two bodies are given.
    static func resolve(
        raw: String?, file: String?, hasDataFields: Bool, ignoresInput: Bool, input: Input,
        readPipe: () -> Data = { FileHandle.standardInput.readData(ofLength: chunkSize) }
    ) throws -> RawBody? {
        if raw != nil, file != nil {
            throw CommandFailure(.failure, "--raw and @FILE are both a whole body: choose one")
        }
        let given: RawBody? = raw.map { .text($0) } ?? file.map { .file(path: $0, guessesType: true) }
        if given != nil, hasDataFields {
            throw CommandFailure(
                .failure,
                "\(raw != nil ? "--raw" : "@FILE") is the whole body and cannot be sent with data fields (name=value, "
                    + "name:=json, name@file)")
        }
        guard !ignoresInput else { return given }
        let conflict = CommandFailure(
            .failure,
            "standard input has data, and the request already has "
                + (given == nil ? "data fields" : raw != nil ? "--raw" : "@FILE")
                + ": send one body (or add --ignore-stdin to leave standard input alone)")
        let elsewhere = given != nil || hasDataFields
        switch input {
        case .terminal:
            return given
        case .file(let remaining):
            if remaining <= 0 { return given }
            if elsewhere { throw conflict }
            // The file itself, read from the start: `/dev/stdin` is a link, whose own size is not the file's.
            if let path = realpath("/dev/stdin", nil) {
                defer { free(path) }
                return .file(path: String(cString: path), guessesType: false)
            }
            let first = readPipe()
            return first.isEmpty ? nil : .pipe(first: first)
        case .stream(let ready):
            if elsewhere {
                // Only what is there now: a pipe a slow writer has not written to yet must not hang the request.
                if ready, !readPipe().isEmpty { throw conflict }
                return given
            }
            let first = readPipe()
            return first.isEmpty ? nil : .pipe(first: first)
        }
    }

    /// Puts the body on `request`: in `httpBody` for `--raw`, else as a streamed body. `Content-Type` is set by
    /// `--json` or `--form` (`mode`), else guessed from `@FILE`'s extension; a header item set later wins.
    ///
    /// - Throws: ``CommandFailure`` for a file that cannot be read.
    func apply(to prepared: inout PreparedRequest, mode: BodyMode?) throws {
        var guessedType: String?
        switch self {
        case .text(let text):
            prepared.urlRequest.httpBody = Data(text.utf8)
            prepared.body = nil
        case .file(let path, let guessesType):
            let url = URL(fileURLWithPath: path)
            do {
                prepared.body = try HTTPRequestBody.file(url)
            } catch {
                throw CommandFailure(.failure, "cannot read @\(path): \(error.localizedDescription)")
            }
            if guessesType { guessedType = MIMEType.mimeType(for: url) }
        case .pipe(let first):
            prepared.body = HTTPRequestBody(length: nil, isReplayable: false) {
                DataChunks(makeNext: {
                    var pending: Data? = first
                    return {
                        if let chunk = pending {
                            pending = nil
                            return chunk
                        }
                        let next = try await BlockingIO.run {
                            FileHandle.standardInput.readData(ofLength: RawBody.chunkSize)
                        }
                        return next.isEmpty ? nil : next
                    }
                })
            }
        }
        switch mode {
        case .json: prepared.urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        case .form:
            prepared.urlRequest.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        case .multipart, nil:
            prepared.urlRequest.setValue(guessedType, forHTTPHeaderField: "Content-Type")
        }
    }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where `courier` writes: the response body to standard output, everything else to standard error, each told
/// whether it is a terminal (which decides colour, pretty-printing and the progress bar).
struct Console: Sendable {
    /// Whether standard output is a terminal.
    var stdoutIsTerminal: Bool
    /// Whether standard error is a terminal.
    var stderrIsTerminal: Bool
    /// Colour is allowed at all: `NO_COLOR` is unset and `TERM` is not `dumb` (https://no-color.org).
    var colorAllowed: Bool
    /// The progress bar is drawn even when standard error is not a terminal (`--force-progress` or
    /// `COURIER_FORCE_PROGRESS=1`), for tests.
    var forceProgress: Bool
    private let writeOut: @Sendable (Data) -> Void
    private let writeErr: @Sendable (Data) -> Void

    /// The process's own standard output and error.
    static func standard(environment: [String: String], forceProgress: Bool) -> Console {
        Console(
            stdoutIsTerminal: isatty(STDOUT_FILENO) == 1, stderrIsTerminal: isatty(STDERR_FILENO) == 1,
            colorAllowed: environment["NO_COLOR"] == nil && environment["TERM"] != "dumb",
            forceProgress: forceProgress || ["1", "true", "yes"].contains(environment["COURIER_FORCE_PROGRESS"] ?? ""),
            writeOut: { try? FileHandle.standardOutput.write(contentsOf: $0) },
            writeErr: { try? FileHandle.standardError.write(contentsOf: $0) })
    }

    /// A console writing to closures, for tests.
    init(
        stdoutIsTerminal: Bool, stderrIsTerminal: Bool, colorAllowed: Bool, forceProgress: Bool,
        writeOut: @escaping @Sendable (Data) -> Void, writeErr: @escaping @Sendable (Data) -> Void
    ) {
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.colorAllowed = colorAllowed
        self.forceProgress = forceProgress
        self.writeOut = writeOut
        self.writeErr = writeErr
    }

    /// Writes bytes to standard output.
    func out(_ data: Data) { writeOut(data) }

    /// Writes text to standard output.
    func out(_ text: String) { writeOut(Data(text.utf8)) }

    /// Writes text to standard error.
    func err(_ text: String) { writeErr(Data(text.utf8)) }

    /// Whether a progress bar is drawn.
    var showsProgress: Bool { stderrIsTerminal || forceProgress }
}

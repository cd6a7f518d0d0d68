import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Asks for a password on the terminal without echoing it, as HTTPie does for `-a USER`: on the controlling terminal
/// (`/dev/tty`), never standard input, which may be the request's body.
enum PasswordPrompt {
    /// The password typed after `prompt`, without its line break.
    ///
    /// - Parameter terminal: the terminal device; tests name one that does not exist.
    /// - Throws: ``CommandFailure`` when there is no terminal to ask on (a script, cron, CI).
    static func ask(_ prompt: String, terminal: String = "/dev/tty") throws -> String {
        let descriptor = open(terminal, O_RDWR | O_NOCTTY)
        guard descriptor >= 0 else { throw noTerminal }
        defer { close(descriptor) }
        var saved = termios()
        let isTerminal = tcgetattr(descriptor, &saved) == 0
        guard isTerminal else { throw noTerminal }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ICANON)
        _ = tcsetattr(descriptor, TCSAFLUSH, &silent)
        defer {
            _ = tcsetattr(descriptor, TCSAFLUSH, &saved)
            _ = write(descriptor, "\n", 1)
        }
        _ = prompt.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        // A password is one line; a terminal that closes ends it.
        while read(descriptor, &byte, 1) == 1, byte != UInt8(ascii: "\n"), line.count < 64 * 1024 {
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
    }

    static let noTerminal = CommandFailure(
        .failure,
        "--auth USER: there is no terminal to ask for the password on; give it as --auth USER:PASSWORD (or in "
            + "~/.netrc)")
}

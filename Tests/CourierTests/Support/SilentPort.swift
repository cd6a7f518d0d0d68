import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A port on 127.0.0.1 where a connection is never made: the socket listens with a backlog of 0 and never accepts,
/// and one connection of its own fills its accept queue, so Linux drops every further SYN and a client waits as it
/// would for a host that does not answer (no address outside the machine needed).
///
/// `init` checks that a second connection really stalls and throws when it does not.
final class SilentPort: Sendable {
    let port: Int
    private let descriptors: [Int32]

    init() throws {
        var opened: [Int32] = []
        func fail() -> SilentPortError {
            for descriptor in opened { close(descriptor) }
            return SilentPortError()
        }
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw fail() }
        opened.append(listener)
        var address = RefusingPort.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound, listen(listener, 0) == 0 else { throw fail() }
        let port = Int(UInt16(bigEndian: address.sin_port))
        // The one connection the queue holds: completed by the kernel at once, on loopback.
        guard let filler = Self.connect(port: port), filler.connected else { throw fail() }
        opened.append(filler.descriptor)
        // A later connection must stay unanswered, or the port would not stand for a silent host.
        guard let probe = Self.connect(port: port) else { throw fail() }
        opened.append(probe.descriptor)
        var poller = pollfd(fd: probe.descriptor, events: Int16(POLLOUT), revents: 0)
        guard !probe.connected, poll(&poller, 1, 200) == 0 else { throw fail() }
        self.port = port
        descriptors = opened
    }

    /// A non-blocking connection to 127.0.0.1:`port`, and whether it was made within 200 ms.
    private static func connect(port: Int) -> (descriptor: Int32, connected: Bool)? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var address = RefusingPort.loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result == 0 { return (descriptor, true) }
        guard errno == EINPROGRESS else {
            close(descriptor)
            return nil
        }
        var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        var failure: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        let ready = poll(&poller, 1, 200) == 1
        let connected = ready && getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &size) == 0 && failure == 0
        return (descriptor, connected)
    }

    /// `http://127.0.0.1:<port>/`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/") ?? URL(fileURLWithPath: "/") }

    deinit {
        for descriptor in descriptors { close(descriptor) }
    }
}

struct SilentPortError: Error {}

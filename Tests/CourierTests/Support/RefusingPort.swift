import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A port on 127.0.0.1 held by a socket that is bound but does not listen: a connection to it is refused, and no
/// server started meanwhile by a test running in parallel can take it. (A port that was only freed was taken by
/// another test's server once, which then answered a request meant to be refused.)
final class RefusingPort: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        (descriptor, port) = try Self.boundSocket(port: 0, reusingAddress: false)
    }

    /// Holds `port`, which a server has just left (``TCPRelay/stop()``). `SO_REUSEADDR` lets the bind succeed past
    /// that server's connections still in `TIME_WAIT`, never while anything listens on the port; and Linux picks no
    /// port held this way for a server binding port 0, so it stays refused.
    ///
    /// - Throws: ``RefusingPortError`` when the port is taken.
    init(holding port: Int) throws {
        (descriptor, self.port) = try Self.boundSocket(port: port, reusingAddress: true)
    }

    private static func boundSocket(port wanted: Int, reusingAddress: Bool) throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RefusingPortError() }
        if reusingAddress {
            var on: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = Self.loopback(port: wanted)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw RefusingPortError()
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The IPv4 address 127.0.0.1:`port`, for `bind` and `connect`.
    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        return address
    }

    /// `http://127.0.0.1:<port>/`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/") ?? URL(fileURLWithPath: "/") }

    deinit {
        close(descriptor)
    }
}

struct RefusingPortError: Error {}

import Foundation

/// One entry of a `NO_PROXY` list, as curl reads it: requests to a matching host go direct.
///
/// - `*` matches every host.
/// - A name matches itself and every name below it (`example.com` and `.example.com` both match `example.com` and
///   `api.example.com`, not `badexample.com`), without regard to case or a trailing dot.
/// - An IP address matches that address; `10.0.0.0/8` or `fd00::/8` matches a network.
/// - `:port` after any of these (`example.com:8080`, `[::1]:8080`) limits the entry to that port.
struct NoProxyRule: Sendable, Hashable {
    private enum Pattern: Hashable {
        case any
        case domain(String)
        case network([UInt8], prefix: Int)
    }

    private let pattern: Pattern
    private let port: Int?

    /// The rule for one entry; `nil` for an empty or unreadable one (it matches nothing, as curl ignores it).
    init?(_ entry: some StringProtocol) {
        var text = entry.trimmingCharacters(in: .whitespaces).lowercased()
        guard !text.isEmpty else { return nil }
        if text == "*" {
            (pattern, port) = (.any, nil)
            return
        }
        var port: Int?
        if text.hasPrefix("[") {
            // [v6] or [v6]:port
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let value = Int(rest.dropFirst()), (1...65535).contains(value) else { return nil }
                port = value
            } else if !rest.isEmpty {
                return nil
            }
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.lastIndex(of: ":") {
            guard let value = Int(text[text.index(after: colon)...]), (1...65535).contains(value) else { return nil }
            port = value
            text = String(text[..<colon])
        }
        self.port = port
        if let network = Self.network(text) {
            pattern = network
            return
        }
        while text.hasPrefix(".") { text.removeFirst() }
        while text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty, !text.contains("/") else { return nil }
        pattern = .domain(text)
    }

    /// Whether a request to `host` (a name or an address, without brackets) on `port` goes direct.
    func matches(host: String, port: Int) -> Bool {
        if let own = self.port, own != port { return false }
        switch pattern {
        case .any:
            return true
        case .domain(let domain):
            var name = host.lowercased()
            while name.hasSuffix(".") { name.removeLast() }
            return name == domain || name.hasSuffix("." + domain)
        case .network(let network, let prefix):
            guard let address = IPAddress.bytes(host), address.count == network.count else { return false }
            return Self.prefixMatches(address, network, bits: prefix)
        }
    }

    /// `10.0.0.0/8`, `::1`, `192.168.1.1` as a network; `nil` when `text` is no address.
    private static func network(_ text: String) -> Pattern? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress.bytes(String(parts[0])) else { return nil }
        let bits = address.count * 8
        guard parts.count == 2 else { return .network(address, prefix: bits) }
        guard let prefix = Int(parts[1]), (0...bits).contains(prefix) else { return nil }
        return .network(address, prefix: prefix)
    }

    private static func prefixMatches(_ address: [UInt8], _ network: [UInt8], bits: Int) -> Bool {
        for index in 0..<address.count {
            let remaining = bits - index * 8
            if remaining <= 0 { return true }
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            if address[index] & mask != network[index] & mask { return false }
        }
        return true
    }
}

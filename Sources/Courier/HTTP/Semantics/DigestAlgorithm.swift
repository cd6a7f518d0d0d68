import Crypto
import Foundation

/// The `algorithm` of an HTTP Digest challenge (RFC 7616 §3.3): the hash, and whether it is a `-sess` variant (whose
/// first value also covers the nonces).
struct DigestAlgorithm: Sendable, Hashable {
    enum Hash: Sendable, Hashable {
        case md5, sha256, sha512Slash256
    }

    var hash: Hash
    var session: Bool

    /// Plain MD5, what a challenge without an `algorithm` means.
    static let md5 = DigestAlgorithm(hash: .md5, session: false)

    private init(hash: Hash, session: Bool) {
        self.hash = hash
        self.session = session
    }

    /// The algorithm a challenge names, without regard to case; none named is MD5. `nil` for one Courier does not
    /// implement (it then answers another challenge, or none).
    init?(_ name: String?) {
        var name = (name ?? "MD5").uppercased()
        session = name.hasSuffix("-SESS")
        if session { name.removeLast(5) }
        switch name {
        case "MD5": hash = .md5
        case "SHA-256": hash = .sha256
        case "SHA-512-256": hash = .sha512Slash256
        default: return nil
        }
    }

    /// As the `algorithm` parameter writes it.
    var name: String {
        let base =
            switch hash {
            case .md5: "MD5"
            case .sha256: "SHA-256"
            case .sha512Slash256: "SHA-512-256"
            }
        return session ? base + "-sess" : base
    }

    /// `H(data)`: the hash of the UTF-8 bytes, in lower-case hex.
    func hex(_ data: String) -> String {
        switch hash {
        case .md5: return MD5.hex(data)
        case .sha256: return HexDigits.lowercase(SHA256.hash(data: Data(data.utf8)))
        case .sha512Slash256: return SHA512Slash256.hex(data)
        }
    }
}

import Foundation

/// A root, an intermediate and a server leaf for local hosts: what an HTTPS test server needs.
///
/// ```swift
/// let chain = try CertificateChain.make()
/// let files = try chain.write(to: directory)
/// // nginx: ssl_certificate files.fullChain; ssl_certificate_key files.leafKey;
/// // client: trust chain.root.der, or pin chain.leaf.der / chain.intermediate.der / chain.root.der
/// ```
public struct CertificateChain: Sendable {
    /// The self-signed root CA.
    public let root: CertificateAuthority
    /// The intermediate CA, signed by ``root``.
    public let intermediate: CertificateAuthority
    /// The server certificate, signed by ``intermediate``.
    public let leaf: IssuedCertificate

    /// Creates a chain from its parts.
    public init(root: CertificateAuthority, intermediate: CertificateAuthority, leaf: IssuedCertificate) {
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
    }

    /// Makes a new chain, every key fresh.
    ///
    /// - Parameters:
    ///   - hosts: the leaf's DNS names; `localhost` by default.
    ///   - ipAddresses: the leaf's IP addresses; `127.0.0.1` by default.
    ///   - validity: the leaf's validity (the CAs are valid from a day ago for ten years).
    ///   - name: a word put into the CAs' common names, to tell chains apart.
    public static func make(
        hosts: [String] = ["localhost"], ipAddresses: [String] = ["127.0.0.1"], validity: Validity = .current,
        name: String = "Courier Test"
    ) throws -> CertificateChain {
        let caValidity = Validity(
            notBefore: Date().addingTimeInterval(-86_400), notAfter: Date().addingTimeInterval(3650 * 86_400))
        let root = try CertificateAuthority.root(commonName: "\(name) Root CA", validity: caValidity)
        let intermediate = try root.intermediate(commonName: "\(name) Intermediate CA", validity: caValidity)
        let leaf = try intermediate.leaf(dnsNames: hosts, ipAddresses: ipAddresses, validity: validity)
        return CertificateChain(root: root, intermediate: intermediate, leaf: leaf)
    }

    /// The chain a server sends, DER, leaf first: leaf and intermediate (the root stays with the client).
    public var presentedDER: [Data] { [leaf.der, intermediate.der] }

    /// Leaf then intermediate, PEM: nginx's `ssl_certificate` file.
    public var fullChainPEM: String { leaf.pem + intermediate.issued.pem }

    /// The files ``write(to:)`` makes.
    public struct Files: Sendable, Hashable {
        /// Leaf and intermediate, PEM (for the server).
        public var fullChain: URL
        /// The leaf's private key, PEM (for the server).
        public var leafKey: URL
        /// The leaf, PEM.
        public var leaf: URL
        /// The intermediate, PEM.
        public var intermediate: URL
        /// The root, PEM (for the client's trust store).
        public var root: URL
    }

    /// Writes the chain into `directory`: `fullchain.pem`, `leaf.key.pem`, and `leaf`, `intermediate`, `root` each
    /// as `.pem` and `.der` (and their keys as `.key.pem`).
    @discardableResult
    public func write(to directory: URL) throws -> Files {
        let leafFiles = try leaf.write(to: directory, name: "leaf")
        let intermediateFiles = try intermediate.issued.write(to: directory, name: "intermediate")
        let rootFiles = try root.issued.write(to: directory, name: "root")
        let fullChain = directory.appendingPathComponent("fullchain.pem")
        try Data(fullChainPEM.utf8).write(to: fullChain)
        return Files(
            fullChain: fullChain, leafKey: leafFiles.key, leaf: leafFiles.pem, intermediate: intermediateFiles.pem,
            root: rootFiles.pem)
    }
}

import Foundation
import NIOSSL

/// The certificate and private key Courier presents when a server asks for one (mutual TLS).
///
/// Set it on a ``SecurityPolicy`` (``SecurityPolicy/clientCertificate``); ``NIOTransport`` presents it on every
/// connection the policy applies to. The material is checked when the value is made, so a bad file fails early.
public struct ClientCertificate: Sendable, Hashable {
    /// Where the identity comes from.
    public enum Source: Sendable, Hashable {
        /// PEM: the certificate chain (leaf first) and the private key, optionally encrypted.
        case pem(certificateChain: Data, privateKey: Data, passphrase: String?)
        /// A PKCS#12 (`.p12`/`.pfx`) archive and its passphrase.
        case pkcs12(Data, passphrase: String)
    }

    /// The identity's bytes.
    public let source: Source

    /// An identity from PEM data.
    ///
    /// - Throws: ``SecurityPolicyError/invalidClientCertificate(_:)`` when the certificate or key cannot be read.
    public init(pemCertificateChain: Data, privateKey: Data, passphrase: String? = nil) throws {
        source = .pem(certificateChain: pemCertificateChain, privateKey: privateKey, passphrase: passphrase)
        _ = try makeNIOSSLIdentity()
    }

    /// An identity from PEM files (the key may be in the certificate file).
    public init(pemCertificateFile: URL, privateKeyFile: URL? = nil, passphrase: String? = nil) throws {
        let certificate = try Self.read(pemCertificateFile)
        let key = try privateKeyFile.map(Self.read) ?? certificate
        try self.init(pemCertificateChain: certificate, privateKey: key, passphrase: passphrase)
    }

    /// An identity from a PKCS#12 archive.
    ///
    /// - Throws: ``SecurityPolicyError/invalidClientCertificate(_:)`` when the archive cannot be opened.
    public init(pkcs12: Data, passphrase: String) throws {
        source = .pkcs12(pkcs12, passphrase: passphrase)
        _ = try makeNIOSSLIdentity()
    }

    private static func read(_ file: URL) throws -> Data {
        do {
            return try Data(contentsOf: file)
        } catch {
            throw SecurityPolicyError.unreadable(path: file.path, reason: "\(error)")
        }
    }

    /// The chain and key as NIOSSL takes them.
    func makeNIOSSLIdentity() throws -> (chain: [NIOSSLCertificate], key: NIOSSLPrivateKey) {
        do {
            switch source {
            case .pem(let chainPEM, let keyPEM, let passphrase):
                let chain = try NIOSSLCertificate.fromPEMBytes(Array(chainPEM))
                guard !chain.isEmpty else { throw SecurityPolicyError.invalidClientCertificate("no certificate") }
                let key: NIOSSLPrivateKey
                if let passphrase {
                    key = try NIOSSLPrivateKey(bytes: Array(keyPEM), format: .pem) { setter in
                        setter(Array(passphrase.utf8))
                    }
                } else {
                    key = try NIOSSLPrivateKey(bytes: Array(keyPEM), format: .pem)
                }
                return (chain, key)
            case .pkcs12(let archive, let passphrase):
                let bundle = try NIOSSLPKCS12Bundle(buffer: Array(archive), passphrase: Array(passphrase.utf8))
                return (bundle.certificateChain, bundle.privateKey)
            }
        } catch let error as SecurityPolicyError {
            throw error
        } catch {
            throw SecurityPolicyError.invalidClientCertificate("\(error)")
        }
    }
}

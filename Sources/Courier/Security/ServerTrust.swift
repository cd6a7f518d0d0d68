import Foundation
import SwiftASN1
import X509

/// What a server presented in its TLS handshake, and what to check it against: the input of
/// ``SecurityPolicy/evaluate(_:forDomain:)`` (`SecTrustRef`).
///
/// A plain value, so evaluations can be tested at a fixed ``verificationDate`` against chosen ``anchors``.
public struct ServerTrust: Sendable, Hashable {
    /// The server's certificates, DER, leaf first, in the order it sent them.
    public var certificateChain: [Data]
    /// The trusted root certificates, DER; ``systemAnchors`` by default.
    public var anchors: [Data]
    /// The time the certificates must be valid at.
    public var verificationDate: Date

    /// Creates a trust value.
    ///
    /// - Parameters:
    ///   - certificateChain: DER certificates, leaf first.
    ///   - anchors: trusted roots, DER; the system's by default.
    ///   - verificationDate: when the chain must be valid; now by default.
    public init(certificateChain: [Data], anchors: [Data]? = nil, verificationDate: Date = Date()) {
        self.certificateChain = certificateChain
        self.anchors = anchors ?? ServerTrust.systemAnchors
        self.verificationDate = verificationDate
    }

    /// The system's trusted roots (DER), read once from the first CA bundle found (`/etc/ssl/certs/ca-certificates.crt`
    /// on Debian and Ubuntu, `/etc/pki/tls/certs/ca-bundle.crt` on Fedora). Empty on Apple platforms, where
    /// URLSessionTransport asks the Security framework instead.
    public static var systemAnchors: [Data] { loadedSystemAnchors }

    private static let loadedSystemAnchors: [Data] = {
        #if canImport(Darwin)
            return []
        #else
            let bundles = [
                "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem",
            ]
            for path in bundles {
                guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                    let documents = try? PEMDocument.parseMultiple(pemString: text)
                else { continue }
                return documents.filter { $0.discriminator == "CERTIFICATE" }.map { Data($0.derBytes) }
            }
            return []
        #endif
    }()
}

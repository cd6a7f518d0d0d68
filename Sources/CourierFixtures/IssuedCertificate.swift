import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate made by ``CertificateAuthority``, with its private key, in the encodings servers and clients take.
public struct IssuedCertificate: Sendable {
    /// The certificate.
    public let certificate: Certificate
    /// Its private key (P-256).
    public let privateKey: P256.Signing.PrivateKey

    /// The certificate, DER-encoded (what `SecurityPolicy.pinnedCertificates` holds).
    public let der: Data

    init(certificate: Certificate, privateKey: P256.Signing.PrivateKey) throws {
        self.certificate = certificate
        self.privateKey = privateKey
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        der = Data(serializer.serializedBytes)
    }

    /// The certificate as one PEM `CERTIFICATE` block.
    public var pem: String {
        PEMDocument(type: "CERTIFICATE", derBytes: Array(der)).pemString + "\n"
    }

    /// The private key as a PEM `PRIVATE KEY` block (PKCS#8), as nginx and NIOSSL read it.
    public var privateKeyPEM: String { privateKey.pemRepresentation + "\n" }

    /// The SHA-256 of the certificate's SubjectPublicKeyInfo, base64: the value of `curl --pinnedpubkey sha256//…`.
    public var publicKeyHashBase64: String {
        let spki = Data(privateKey.publicKey.derRepresentation)
        return Data(SHA256.hash(data: spki)).base64EncodedString()
    }

    /// Writes `<name>.pem`, `<name>.der` and `<name>.key.pem` into `directory` and returns their URLs.
    @discardableResult
    public func write(to directory: URL, name: String) throws -> (pem: URL, der: URL, key: URL) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let urls = (
            pem: directory.appendingPathComponent("\(name).pem"), der: directory.appendingPathComponent("\(name).der"),
            key: directory.appendingPathComponent("\(name).key.pem")
        )
        try Data(pem.utf8).write(to: urls.pem)
        try der.write(to: urls.der)
        try Data(privateKeyPEM.utf8).write(to: urls.key)
        return urls
    }
}

import Crypto
import Foundation
import SwiftASN1
import X509

/// Makes real X.509 certificates at run time, for tests and `courier demo`: roots, intermediates, server leaves,
/// and the odd ones (self-signed, nameless, expired). Keys are P-256, signatures ECDSA with SHA-256.
///
/// ```swift
/// let root = try CertificateAuthority.root(commonName: "Courier Test Root")
/// let intermediate = try root.intermediate(commonName: "Courier Test Intermediate")
/// let leaf = try intermediate.leaf(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
/// // nginx: ssl_certificate = leaf.pem + intermediate.certificate.pem; ssl_certificate_key = leaf.privateKeyPEM
/// ```
///
/// ``CertificateChain/make(hosts:ipAddresses:validity:)`` does the three steps at once.
public struct CertificateAuthority: Sendable {
    /// The authority's own certificate and key.
    public let issued: IssuedCertificate

    /// The authority's certificate, DER.
    public var der: Data { issued.der }

    /// A self-signed root CA.
    ///
    /// - Parameters:
    ///   - commonName: the subject's CN.
    ///   - validity: when the certificate is valid; ``Validity/current`` by default.
    public static func root(commonName: String, validity: Validity = .current) throws -> CertificateAuthority {
        try makeAuthority(commonName: commonName, validity: validity, signedBy: nil)
    }

    /// An intermediate CA signed by this authority.
    public func intermediate(commonName: String, validity: Validity = .current) throws -> CertificateAuthority {
        try Self.makeAuthority(commonName: commonName, validity: validity, signedBy: issued)
    }

    /// A CA certificate with a new key, signed by `issuer`, or by itself when there is none.
    private static func makeAuthority(
        commonName: String, validity: Validity, signedBy issuer: IssuedCertificate?
    ) throws -> CertificateAuthority {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            CommonName(commonName)
            OrganizationName("Courier Fixtures")
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: validity.notBefore, notValidAfter: validity.notAfter,
            issuer: issuer?.certificate.subject ?? name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Self.authorityExtensions(key: key), issuerPrivateKey: .init(issuer?.privateKey ?? key))
        return CertificateAuthority(issued: try IssuedCertificate(certificate: certificate, privateKey: key))
    }

    /// A server (and client) certificate signed by this authority.
    ///
    /// - Parameters:
    ///   - commonName: the subject's CN; the first DNS name by default.
    ///   - dnsNames: subjectAltName DNS names, e.g. `["localhost"]`.
    ///   - ipAddresses: subjectAltName IP addresses, e.g. `["127.0.0.1"]`.
    ///   - validity: when the certificate is valid; pass ``Validity/expired`` for an expired leaf.
    public func leaf(
        commonName: String? = nil, dnsNames: [String] = ["localhost"], ipAddresses: [String] = ["127.0.0.1"],
        validity: Validity = .current
    ) throws -> IssuedCertificate {
        let key = P256.Signing.PrivateKey()
        let subject = try Self.subject(commonName: commonName ?? dnsNames.first ?? ipAddresses.first)
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: validity.notBefore, notValidAfter: validity.notAfter, issuer: issued.certificate.subject,
            subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Self.leafExtensions(dnsNames: dnsNames, ipAddresses: ipAddresses),
            issuerPrivateKey: .init(issued.privateKey))
        return try IssuedCertificate(certificate: certificate, privateKey: key)
    }

    /// A self-signed server certificate that is not a CA.
    ///
    /// - Parameters:
    ///   - commonName: the subject's CN, or `nil` for none.
    ///   - dnsNames: subjectAltName DNS names; with no DNS names and no IP addresses there is no subjectAltName.
    ///   - ipAddresses: subjectAltName IP addresses.
    ///
    /// `selfSigned(commonName: "localhost", dnsNames: [], ipAddresses: [])` has only a CN;
    /// `selfSigned(commonName: nil, dnsNames: [], ipAddresses: [])` has no name at all.
    public static func selfSigned(
        commonName: String?, dnsNames: [String] = [], ipAddresses: [String] = [], validity: Validity = .current
    ) throws -> IssuedCertificate {
        let key = P256.Signing.PrivateKey()
        let subject = try subject(commonName: commonName)
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: validity.notBefore, notValidAfter: validity.notAfter, issuer: subject, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try leafExtensions(dnsNames: dnsNames, ipAddresses: ipAddresses),
            issuerPrivateKey: .init(key))
        return try IssuedCertificate(certificate: certificate, privateKey: key)
    }

    // MARK: Building blocks

    private static func subject(commonName: String?) throws -> DistinguishedName {
        if let commonName {
            return try DistinguishedName {
                CommonName(commonName)
                OrganizationName("Courier Fixtures")
            }
        }
        return try DistinguishedName { OrganizationName("Courier Fixtures") }
    }

    private static func authorityExtensions(key: P256.Signing.PrivateKey) throws -> Certificate.Extensions {
        try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
        }
    }

    private static func leafExtensions(dnsNames: [String], ipAddresses: [String]) throws -> Certificate.Extensions {
        var names: [GeneralName] = dnsNames.map { .dnsName($0) }
        for address in ipAddresses {
            guard let bytes = ipAddressBytes(address) else { throw FixtureError.invalidIPAddress(address) }
            names.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(bytes))))
        }
        return try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            try ExtendedKeyUsage([.serverAuth, .clientAuth])
            if !names.isEmpty { SubjectAlternativeNames(names) }
        }
    }

    private static func ipAddressBytes(_ text: String) -> [UInt8]? {
        let v4 = text.split(separator: ".", omittingEmptySubsequences: false)
        if v4.count == 4 {
            let bytes = v4.compactMap { UInt8($0) }
            return bytes.count == 4 ? bytes : nil
        }
        return nil
    }
}

/// When a certificate is valid.
public struct Validity: Sendable, Hashable {
    /// The first moment of validity.
    public var notBefore: Date
    /// The last moment of validity.
    public var notAfter: Date

    /// A window from `notBefore` to `notAfter`.
    public init(notBefore: Date, notAfter: Date) {
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// From a day ago to a year from now.
    public static var current: Validity {
        Validity(notBefore: Date().addingTimeInterval(-86_400), notAfter: Date().addingTimeInterval(365 * 86_400))
    }

    /// Ended a day ago (it began 30 days ago).
    public static var expired: Validity {
        Validity(notBefore: Date().addingTimeInterval(-30 * 86_400), notAfter: Date().addingTimeInterval(-86_400))
    }
}

/// Bad input to the fixture generator.
public enum FixtureError: Error, Sendable, Hashable {
    /// Only dotted IPv4 addresses are supported.
    case invalidIPAddress(String)
}

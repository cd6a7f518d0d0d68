import Crypto
import Foundation
import SwiftASN1
import X509

extension SecurityPolicy {
    /// The file extensions ``certificates(inDirectory:)`` reads.
    public static let certificateFileExtensions: Set<String> = ["cer", "der", "crt", "pem"]

    /// Every certificate (DER) in the `.cer`, `.der`, `.crt` and `.pem` files directly inside `directory`; a PEM file
    /// may hold several, and a PEM file without a certificate (e.g. a private key) is skipped.
    ///
    /// - Throws: ``SecurityPolicyError`` when the directory or a file cannot be read or a file holds no certificate.
    public static func certificates(inDirectory directory: URL) throws -> Set<Data> {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw SecurityPolicyError.unreadable(path: directory.path, reason: "\(error)")
        }
        var found: Set<Data> = []
        for name in names.sorted()
        where certificateFileExtensions.contains((name as NSString).pathExtension.lowercased()) {
            let file = directory.appendingPathComponent(name)
            let data: Data
            do {
                data = try Data(contentsOf: file)
            } catch {
                throw SecurityPolicyError.unreadable(path: file.path, reason: "\(error)")
            }
            if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN"),
                !text.contains("-----BEGIN CERTIFICATE-----")
            {
                continue
            }
            found.formUnion(try certificates(fromPEMOrDER: data, name: name))
        }
        return found
    }

    /// Every certificate in the bundle's `.cer`, `.der`, `.crt` and `.pem` resources (`certificatesInBundle:`).
    public static func certificates(in bundle: Bundle) throws -> Set<Data> {
        guard let resources = bundle.resourceURL else { return [] }
        return try certificates(inDirectory: resources)
    }

    /// The certificates (DER) in one file, DER or PEM.
    public static func certificates(inFile file: URL) throws -> Set<Data> {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw SecurityPolicyError.unreadable(path: file.path, reason: "\(error)")
        }
        return try certificates(fromPEMOrDER: data, name: file.lastPathComponent)
    }

    /// The certificates in `data`: one DER certificate, or any number of PEM `CERTIFICATE` blocks.
    ///
    /// - Throws: ``SecurityPolicyError/invalidCertificate(_:)`` when there is none.
    public static func certificates(fromPEMOrDER data: Data, name: String = "data") throws -> Set<Data> {
        if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN") {
            let documents = (try? PEMDocument.parseMultiple(pemString: text)) ?? []
            let ders = documents.filter { $0.discriminator == "CERTIFICATE" }.map { Data($0.derBytes) }
            guard !ders.isEmpty, ders.allSatisfy({ (try? Certificate(derEncoded: Array($0))) != nil }) else {
                throw SecurityPolicyError.invalidCertificate(name)
            }
            return Set(ders)
        }
        guard (try? Certificate(derEncoded: Array(data))) != nil else {
            throw SecurityPolicyError.invalidCertificate(name)
        }
        return [data]
    }

    /// SHA-256 of the certificate's SubjectPublicKeyInfo (DER), the value ``pinnedPublicKeyHashes`` holds; its
    /// base64 is what `curl --pinnedpubkey sha256//…` takes.
    ///
    /// - Parameter der: a DER certificate.
    /// - Throws: ``SecurityPolicyError/invalidCertificate(_:)`` when `der` is not a certificate.
    public static func publicKeyHash(ofCertificate der: Data) throws -> Data {
        guard let spki = subjectPublicKeyInfo(ofCertificate: der) else {
            throw SecurityPolicyError.invalidCertificate("\(der.count) bytes")
        }
        return Data(SHA256.hash(data: spki))
    }

    /// The DER SubjectPublicKeyInfo of a DER certificate, or `nil` when it is not one.
    static func subjectPublicKeyInfo(ofCertificate der: Data) -> Data? {
        guard let certificate = try? Certificate(derEncoded: Array(der)) else { return nil }
        return subjectPublicKeyInfo(of: certificate)
    }

    static func subjectPublicKeyInfo(of certificate: Certificate) -> Data? {
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate.publicKey)) != nil else { return nil }
        return Data(serializer.serializedBytes)
    }
}

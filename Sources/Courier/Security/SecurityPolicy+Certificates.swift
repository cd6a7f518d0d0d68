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

    /// AFNetworking's `policyWithPinningMode:`: a policy pinning every certificate in `bundle`'s resources (the
    /// main bundle, `.main`, as AFNetworking reads; `Bundle.module` for a package's resources). For
    /// ``PinningMode/none`` nothing is read.
    ///
    /// - Throws: ``SecurityPolicyError/noPins(searched:)`` when the bundle has no certificate (a policy pinning
    ///   nothing would refuse every server, as AFNetworking 3's does silently); what reading the files throws.
    public init(pinningMode: PinningMode, certificatesIn bundle: Bundle) throws {
        guard pinningMode != .none else {
            self.init(pinningMode: .none)
            return
        }
        let found = try Self.certificates(in: bundle)
        guard !found.isEmpty else {
            throw SecurityPolicyError.noPins(searched: bundle.resourceURL?.path ?? bundle.bundlePath)
        }
        self.init(pinningMode: pinningMode, pinnedCertificates: found)
    }

    /// A policy pinning every certificate (`.cer`, `.der`, `.crt`, `.pem`) directly inside `directory`: on Linux,
    /// where a program has no bundle of its own, name the directory its certificates ship in.
    ///
    /// - Throws: ``SecurityPolicyError/noPins(searched:)`` when the directory has no certificate; what reading it
    ///   throws.
    public init(pinningMode: PinningMode, certificatesInDirectory directory: URL) throws {
        let found = try Self.certificates(inDirectory: directory)
        guard pinningMode == .none || !found.isEmpty else { throw SecurityPolicyError.noPins(searched: directory.path) }
        self.init(pinningMode: pinningMode, pinnedCertificates: found)
    }

    /// Whether the policy pins something its mode compares: a certificate, or in ``PinningMode/publicKey`` mode a
    /// key digest; always `true` without pinning.
    var pinsSomething: Bool {
        switch pinningMode {
        case .none: true
        case .certificate: !pinnedCertificates.isEmpty
        case .publicKey: !pinnedCertificates.isEmpty || !pinnedPublicKeyHashes.isEmpty
        }
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

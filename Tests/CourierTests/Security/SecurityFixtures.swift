import CourierFixtures
import Foundation

/// The certificates the security tests use, made once per run with fixed validity windows, so the pure
/// evaluation tests can verify at a fixed time (``SecurityFixtures/verificationDate``).
struct SecurityFixtures: Sendable {
    static let shared: SecurityFixtures = {
        do {
            return try SecurityFixtures()
        } catch {
            fatalError("cannot make the test certificates: \(error)")
        }
    }()

    /// 2030-06-01T00:00:00Z: inside every window below except the expired leaf's.
    static let verificationDate = Date(timeIntervalSince1970: 1_906_502_400)

    let chain: CertificateChain
    let otherChain: CertificateChain
    let expiredLeaf: IssuedCertificate
    let selfSignedCommonName: IssuedCertificate
    let selfSignedSubjectAltName: IssuedCertificate
    let selfSignedNoName: IssuedCertificate

    private init() throws {
        let window = Validity(
            notBefore: Date(timeIntervalSince1970: 1_577_836_800),  // 2020-01-01
            notAfter: Date(timeIntervalSince1970: 2_208_988_800))  // 2040-01-01
        let expired = Validity(
            notBefore: Date(timeIntervalSince1970: 1_577_836_800),  // 2020-01-01
            notAfter: Date(timeIntervalSince1970: 1_735_689_600))  // 2025-01-01
        func makeChain(_ name: String) throws -> CertificateChain {
            let root = try CertificateAuthority.root(commonName: "\(name) Root", validity: window)
            let intermediate = try root.intermediate(commonName: "\(name) Intermediate", validity: window)
            let leaf = try intermediate.leaf(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], validity: window)
            return CertificateChain(root: root, intermediate: intermediate, leaf: leaf)
        }
        chain = try makeChain("Pinning")
        otherChain = try makeChain("Unrelated")
        expiredLeaf = try chain.intermediate.leaf(validity: expired)
        selfSignedCommonName = try CertificateAuthority.selfSigned(commonName: "localhost", validity: window)
        selfSignedSubjectAltName = try CertificateAuthority.selfSigned(
            commonName: "Courier SAN", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], validity: window)
        selfSignedNoName = try CertificateAuthority.selfSigned(commonName: nil, validity: window)
    }
}

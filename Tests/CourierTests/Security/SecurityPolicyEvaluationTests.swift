import CourierFixtures
import Foundation
import Testing

@testable import Courier

/// AFSecurityPolicy's evaluation, case by case, at a fixed verification time against chosen anchors.
@Suite struct SecurityPolicyEvaluationTests {
    let fixtures = SecurityFixtures.shared

    /// The server's chain (leaf and intermediate), the test root as the only anchor.
    var serverTrust: ServerTrust {
        ServerTrust(
            certificateChain: fixtures.chain.presentedDER, anchors: [fixtures.chain.root.der],
            verificationDate: SecurityFixtures.verificationDate)
    }

    func policy(_ mode: SecurityPolicy.PinningMode, _ pins: [Data]) -> SecurityPolicy {
        SecurityPolicy(pinningMode: mode, pinnedCertificates: Set(pins))
    }

    static let pinnedModes: [SecurityPolicy.PinningMode] = [.certificate, .publicKey]

    @Test(arguments: pinnedModes)
    func pinningAnyCertificateOfTheChainPasses(mode: SecurityPolicy.PinningMode) {
        let chain = fixtures.chain
        let pinSets: [(String, [Data])] = [
            ("leaf", [chain.leaf.der]), ("intermediate", [chain.intermediate.der]), ("root", [chain.root.der]),
            ("whole chain", [chain.leaf.der, chain.intermediate.der, chain.root.der]),
            ("chain and an unrelated certificate", [chain.leaf.der, chain.root.der, fixtures.otherChain.leaf.der]),
        ]
        for (name, pins) in pinSets {
            let evaluation = policy(mode, pins).evaluation(of: serverTrust, forDomain: "localhost")
            #expect(evaluation.isTrusted, "\(mode) pinning the \(name): \(evaluation.reason)")
        }
    }

    @Test(arguments: pinnedModes)
    func emptyPinsFail(mode: SecurityPolicy.PinningMode) {
        #expect(!policy(mode, []).evaluate(serverTrust, forDomain: "localhost"))
    }

    @Test(arguments: pinnedModes)
    func pinsOfAnotherChainFail(mode: SecurityPolicy.PinningMode) {
        let other = fixtures.otherChain
        let evaluation = policy(mode, [other.leaf.der, other.intermediate.der, other.root.der])
            .evaluation(of: serverTrust, forDomain: "localhost")
        #expect(!evaluation.isTrusted)
        #expect(evaluation.reason.contains("pinning"))
    }

    @Test(arguments: pinnedModes)
    func wrongDomainFailsUnlessDomainValidationIsOff(mode: SecurityPolicy.PinningMode) {
        var policy = policy(mode, [fixtures.chain.root.der])
        let refused = policy.evaluation(of: serverTrust, forDomain: "example.com")
        #expect(!refused.isTrusted)
        #expect(refused.reason.contains("example.com"))
        #expect(policy.evaluate(serverTrust, forDomain: "127.0.0.1"))  // the leaf's IP address SAN
        policy.validatesDomainName = false
        #expect(policy.evaluate(serverTrust, forDomain: "example.com"))
    }

    @Test func nilDomainSkipsTheNameCheck() {
        #expect(policy(.certificate, [fixtures.chain.leaf.der]).evaluate(serverTrust, forDomain: nil))
    }

    @Test func selfSignedCertificatesWithANamePinnedWithAllowInvalidPass() {
        for certificate in [fixtures.selfSignedCommonName, fixtures.selfSignedSubjectAltName] {
            var policy = policy(.certificate, [certificate.der])
            policy.allowInvalidCertificates = true
            let trust = ServerTrust(
                certificateChain: [certificate.der], anchors: [], verificationDate: SecurityFixtures.verificationDate)
            let evaluation = policy.evaluation(of: trust, forDomain: "localhost")
            #expect(evaluation.isTrusted, "\(certificate.certificate.subject): \(evaluation.reason)")
            #expect(!policy.evaluate(trust, forDomain: "example.com"))
        }
    }

    @Test func selfSignedCertificateWithoutANameFails() {
        var policy = policy(.certificate, [fixtures.selfSignedNoName.der])
        policy.allowInvalidCertificates = true
        let trust = ServerTrust(
            certificateChain: [fixtures.selfSignedNoName.der], anchors: [],
            verificationDate: SecurityFixtures.verificationDate)
        #expect(!policy.evaluate(trust, forDomain: "localhost"))
    }

    @Test func allowingInvalidCertificatesForADomainNeedsPins() {
        var policy = SecurityPolicy.default
        policy.allowInvalidCertificates = true
        #expect(!policy.evaluate(serverTrust, forDomain: "localhost"))  // step 1
        var pinless = SecurityPolicy(pinningMode: .certificate)
        pinless.allowInvalidCertificates = true
        #expect(!pinless.evaluate(serverTrust, forDomain: "localhost"))
        policy.validatesDomainName = false
        #expect(policy.evaluate(serverTrust, forDomain: "localhost"))  // step 3: anything goes
    }

    @Test func noPinningNeedsAChainToAnAnchor() {
        #expect(SecurityPolicy.default.evaluate(serverTrust, forDomain: "localhost"))
        var untrusted = serverTrust
        untrusted.anchors = [fixtures.otherChain.root.der]
        let evaluation = SecurityPolicy.default.evaluation(of: untrusted, forDomain: "localhost")
        #expect(!evaluation.isTrusted)
        #expect(evaluation.reason.contains("anchor"))
        var withExtraAnchor = SecurityPolicy.default
        withExtraAnchor.additionalTrustedCertificates = [fixtures.chain.root.der]
        #expect(withExtraAnchor.evaluate(untrusted, forDomain: "localhost"))
    }

    @Test func aChainMissingItsIntermediateDoesNotVerify() {
        var trust = serverTrust
        trust.certificateChain = [fixtures.chain.leaf.der]
        #expect(!SecurityPolicy.default.evaluate(trust, forDomain: "localhost"))
        var pinned = policy(.certificate, [fixtures.chain.intermediate.der])
        #expect(!pinned.evaluate(trust, forDomain: "localhost"))  // step 4: invalid against the anchors
        pinned.allowInvalidCertificates = true
        #expect(pinned.evaluate(trust, forDomain: "localhost"))  // step 5: the pinned intermediate ends the chain
    }

    @Test func pinsOfAnUntrustedChainFailUnlessInvalidCertificatesAreAllowed() {
        var trust = serverTrust
        trust.anchors = []
        var policy = policy(.publicKey, [fixtures.chain.leaf.der])
        #expect(!policy.evaluate(trust, forDomain: "localhost"))  // step 4
        policy.allowInvalidCertificates = true
        #expect(policy.evaluate(trust, forDomain: "localhost"))
        var certificatePolicy = self.policy(.certificate, [fixtures.chain.root.der])
        certificatePolicy.allowInvalidCertificates = true
        #expect(certificatePolicy.evaluate(trust, forDomain: "localhost"))  // step 5: the pin is the anchor
    }

    @Test func expiredLeaf() {
        let trust = ServerTrust(
            certificateChain: [fixtures.expiredLeaf.der, fixtures.chain.intermediate.der],
            anchors: [fixtures.chain.root.der], verificationDate: SecurityFixtures.verificationDate)
        let evaluation = SecurityPolicy.default.evaluation(of: trust, forDomain: "localhost")
        #expect(!evaluation.isTrusted)
        #expect(evaluation.reason.contains("expired"))
        #expect(!policy(.certificate, [fixtures.chain.root.der]).evaluate(trust, forDomain: "localhost"))
        var allowing = policy(.publicKey, [fixtures.chain.intermediate.der])
        #expect(!allowing.evaluate(trust, forDomain: "localhost"))
        allowing.allowInvalidCertificates = true
        #expect(allowing.evaluate(trust, forDomain: "localhost"))
    }

    @Test func publicKeyHashes() throws {
        let hash = try SecurityPolicy.publicKeyHash(ofCertificate: fixtures.chain.intermediate.der)
        #expect(hash.base64EncodedString() == fixtures.chain.intermediate.issued.publicKeyHashBase64)
        let pinned = try SecurityPolicy(pinnedPublicKeyHashesBase64: [hash.base64EncodedString()])
        #expect(pinned.pinningMode == .publicKey)
        #expect(pinned.evaluate(serverTrust, forDomain: "localhost"))
        let other = try SecurityPolicy(pinnedPublicKeyHashesBase64: [fixtures.otherChain.leaf.publicKeyHashBase64])
        let evaluation = other.evaluation(of: serverTrust, forDomain: "localhost")
        #expect(!evaluation.isTrusted)
        #expect(evaluation.reason.contains(fixtures.chain.leaf.publicKeyHashBase64))
        #expect(throws: SecurityPolicyError.invalidPublicKeyHash("abc")) {
            try SecurityPolicy(pinnedPublicKeyHashesBase64: ["abc"])
        }
    }

    @Test func garbageChainFails() {
        let trust = ServerTrust(
            certificateChain: [Data("not a certificate".utf8)], anchors: [fixtures.chain.root.der],
            verificationDate: SecurityFixtures.verificationDate)
        #expect(!SecurityPolicy.default.evaluate(trust, forDomain: "localhost"))
        let empty = ServerTrust(certificateChain: [], anchors: [], verificationDate: SecurityFixtures.verificationDate)
        #expect(!policy(.publicKey, [fixtures.chain.leaf.der]).evaluate(empty, forDomain: nil))
    }

    @Test func hostNameMatching() {
        #expect(TrustEvaluator.dnsName("*.example.com", matches: "api.example.com"))
        #expect(!TrustEvaluator.dnsName("*.example.com", matches: "a.b.example.com"))
        #expect(!TrustEvaluator.dnsName("*.example.com", matches: "example.com"))
        #expect(!TrustEvaluator.dnsName("*.com", matches: "example.com"))
        #expect(TrustEvaluator.dnsName("LocalHost.", matches: "localhost"))
    }
}

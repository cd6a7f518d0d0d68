import Crypto
import Foundation
import SwiftASN1
import X509

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// AFNetworking's `evaluateServerTrust:forDomain:` over swift-certificates, step by step.
///
/// Chain validation is done here rather than by swift-certificates' `Verifier` because the evaluation must be a
/// synchronous function (it runs inside a TLS handshake callback), and `Verifier` is `async`. What is checked, the
/// way SecTrust and OpenSSL check it: a path from the leaf, through certificates the server sent, to an anchor, each
/// signature verified with the issuer's key, every certificate valid at the verification time, every intermediate a
/// CA, and (when asked) the leaf's names matching the host.
struct TrustEvaluator {
    let policy: SecurityPolicy
    let trust: ServerTrust
    let domain: String?
    /// On Apple platforms, SecTrust's verdict on "valid against the anchors" (steps 3 and 4), which Courier cannot
    /// compute there because the system's roots are not readable; `nil` means compute it.
    var platformVerdict: TrustEvaluation? = nil

    func run() -> TrustEvaluation {
        guard !trust.certificateChain.isEmpty else { return .refused("the server sent no certificate") }
        var chain: [Certificate] = []
        for (index, der) in trust.certificateChain.enumerated() {
            guard let certificate = try? Certificate(derEncoded: Array(der)) else {
                return .refused("certificate \(index) of the server's chain cannot be parsed")
            }
            chain.append(certificate)
        }
        // Step 1.
        if domain != nil, policy.allowInvalidCertificates, policy.validatesDomainName,
            policy.pinningMode == .none || !policy.hasPins
        {
            return .refused(
                "an invalid certificate can be allowed for a domain name only with pinning (pin the certificate, or "
                    + "turn validatesDomainName off)")
        }
        // Step 2: the name is checked only when asked.
        let host = policy.validatesDomainName ? domain : nil
        var anchors: [Certificate] {
            Self.parseAnchors(trust.anchors) + Self.parse(Array(policy.additionalTrustedCertificates))
        }
        // Step 3.
        if policy.pinningMode == .none {
            if policy.allowInvalidCertificates { return .trusted }
            return platformVerdict ?? validate(chain, anchors: anchors, host: host).evaluation
        }
        // Step 4.
        var validatedPath: [Certificate] = []
        if !policy.allowInvalidCertificates, let platformVerdict {
            guard platformVerdict.isTrusted else { return platformVerdict }
            validatedPath = chain  // SecTrust's evaluated chain, anchor included
        } else if !policy.allowInvalidCertificates {
            let result = validate(chain, anchors: anchors, host: host)
            guard result.evaluation.isTrusted else { return result.evaluation }
            validatedPath = result.path
        }
        switch policy.pinningMode {
        case .none: return .trusted
        case .certificate: return matchPinnedCertificates(chain, host: host)
        case .publicKey: return matchPinnedKeys(chain + validatedPath)
        }
    }

    /// Step 5: the pinned certificates are the only anchors; the name check applies again.
    private func matchPinnedCertificates(_ chain: [Certificate], host: String?) -> TrustEvaluation {
        let pinned = Self.parse(policy.pinnedCertificates.sorted { $0.lexicographicallyPrecedes($1) })
        let result = validate(chain, anchors: pinned, host: host)
        guard result.evaluation.isTrusted else {
            return .refused(
                "certificate pinning: \(result.evaluation.reason) (with the \(pinned.count) pinned certificate(s) "
                    + "as the only anchors)")
        }
        let pinnedDER = policy.pinnedCertificates
        for certificate in result.path.reversed() where pinnedDER.contains(Self.der(certificate)) {
            return .trusted
        }
        return .refused("certificate pinning: no certificate of the server's chain is pinned")
    }

    /// Step 6: the keys of `certificates`, the chain as sent and the path it was validated along (which may end at
    /// an anchor the server did not send).
    private func matchPinnedKeys(_ certificates: [Certificate]) -> TrustEvaluation {
        let pinnedKeys = Set(policy.pinnedCertificates.compactMap(SecurityPolicy.subjectPublicKeyInfo(ofCertificate:)))
        var seen: [String] = []
        for certificate in certificates {
            guard let spki = SecurityPolicy.subjectPublicKeyInfo(of: certificate) else { continue }
            if pinnedKeys.contains(spki) { return .trusted }
            let hash = Data(SHA256.hash(data: spki))
            if policy.pinnedPublicKeyHashes.contains(hash) { return .trusted }
            let text = hash.base64EncodedString()
            if !seen.contains(text) { seen.append(text) }
        }
        return .refused(
            "public-key pinning: no key of the server's chain matches a pinned key (the chain's SHA-256 SPKI "
                + "digests: \(seen.joined(separator: ", ")))")
    }

    // MARK: Chain validation

    struct Validation {
        var evaluation: TrustEvaluation
        /// Leaf first, ending at the anchor; empty when no valid path was found.
        var path: [Certificate]
    }

    private func validate(_ chain: [Certificate], anchors: [Certificate], host: String?) -> Validation {
        let leaf = chain[0]
        let date = trust.verificationDate
        if let problem = Self.validityProblem(leaf, at: date) {
            return Validation(evaluation: .refused(problem), path: [])
        }
        if let host, !Self.matches(leaf, host: host) {
            return Validation(
                evaluation: .refused("the certificate \(Self.name(leaf)) is not valid for “\(host)”"), path: [])
        }
        var firstProblem: String?
        if let path = buildPath(
            from: [leaf], intermediates: Array(chain.dropFirst()), anchors: anchors, problem: &firstProblem)
        {
            return Validation(evaluation: .trusted, path: path)
        }
        return Validation(
            evaluation: .refused(
                firstProblem ?? "the chain of \(Self.name(leaf)) does not lead to a trusted anchor"), path: [])
    }

    /// Depth-first search for a path from `path.last` to an anchor.
    private func buildPath(
        from path: [Certificate], intermediates: [Certificate], anchors: [Certificate], problem: inout String?
    ) -> [Certificate]? {
        guard let current = path.last, path.count <= 12 else { return nil }
        if anchors.contains(current) { return path }  // a pinned leaf or intermediate ends the chain
        for anchor in anchors where anchor.subject == current.issuer {
            guard anchor.publicKey.isValidSignature(current.signature, for: current) else { continue }
            if let issue = Self.validityProblem(anchor, at: trust.verificationDate) {
                problem = problem ?? issue
                continue
            }
            return path + [anchor]
        }
        for issuer in intermediates where issuer.subject == current.issuer && !path.contains(issuer) {
            guard issuer.publicKey.isValidSignature(current.signature, for: current) else { continue }
            if let issue = Self.validityProblem(issuer, at: trust.verificationDate) {
                problem = problem ?? issue
                continue
            }
            guard Self.isCertificateAuthority(issuer) else {
                problem = problem ?? "the issuer \(Self.name(issuer)) is not a certificate authority"
                continue
            }
            if let found = buildPath(
                from: path + [issuer], intermediates: intermediates, anchors: anchors, problem: &problem)
            {
                return found
            }
        }
        return nil
    }

    // MARK: Certificate facts

    /// The system's roots, parsed once: most evaluations on Linux use them.
    private static let systemAnchorCertificates = parse(ServerTrust.systemAnchors)

    static func parseAnchors(_ ders: [Data]) -> [Certificate] {
        ders == ServerTrust.systemAnchors ? systemAnchorCertificates : parse(ders)
    }

    static func parse(_ ders: [Data]) -> [Certificate] {
        ders.compactMap { try? Certificate(derEncoded: Array($0)) }
    }

    static func der(_ certificate: Certificate) -> Data {
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate)) != nil else { return Data() }
        return Data(serializer.serializedBytes)
    }

    static func name(_ certificate: Certificate) -> String {
        "“\(certificate.subject)”"
    }

    static func validityProblem(_ certificate: Certificate, at date: Date) -> String? {
        if date < certificate.notValidBefore {
            return "the certificate \(name(certificate)) is not valid before \(certificate.notValidBefore)"
        }
        if date > certificate.notValidAfter {
            return "the certificate \(name(certificate)) expired on \(certificate.notValidAfter)"
        }
        return nil
    }

    static func isCertificateAuthority(_ certificate: Certificate) -> Bool {
        guard case .isCertificateAuthority = try? certificate.extensions.basicConstraints else { return false }
        if let usage = try? certificate.extensions.keyUsage, !usage.keyCertSign { return false }
        return true
    }

    /// RFC 6125 matching: the subjectAltName's DNS names (a `*` only as the whole leftmost label) and IP addresses;
    /// the subject's common name only when there is no subjectAltName, as SecTrust and OpenSSL do.
    static func matches(_ certificate: Certificate, host rawHost: String) -> Bool {
        var host = rawHost.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        let address = IPAddress.bytes(host)
        if let names = try? certificate.extensions.subjectAlternativeNames, !names.isEmpty {
            for name in names {
                switch name {
                case .dnsName(let pattern):
                    if address == nil, dnsName(pattern, matches: host) { return true }
                case .ipAddress(let bytes):
                    if let address, address == Array(bytes.bytes) { return true }
                default:
                    continue
                }
            }
            return false
        }
        for rdn in certificate.subject {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                guard let commonName = String(attribute.value) else { continue }
                if address == nil ? dnsName(commonName, matches: host) : commonName == host { return true }
            }
        }
        return false
    }

    static func dnsName(_ rawPattern: String, matches host: String) -> Bool {
        var pattern = rawPattern.lowercased()
        if pattern.hasSuffix(".") { pattern.removeLast() }
        guard !pattern.isEmpty else { return false }
        if pattern == host { return true }
        guard pattern.hasPrefix("*.") else { return false }
        let suffix = pattern.dropFirst(1)  // ".example.com"
        guard suffix.split(separator: ".").count >= 2, host.hasSuffix(suffix) else { return false }
        let label = host.dropLast(suffix.count)
        return !label.isEmpty && !label.contains(".")
    }
}

#if canImport(Security)
    import Foundation
    import Security

    extension SecurityPolicy {
        /// Evaluates a `SecTrust` from a server-trust challenge (Apple platforms): the ``serverTrustHook``, when
        /// there is one, decides first, given the chain the server presented; otherwise the system decides whether
        /// the chain is valid (with ``additionalTrustedCertificates`` as extra anchors and the host name checked only
        /// when ``validatesDomainName``), and Courier's own steps do the rest, as on Linux.
        public func evaluation(of secTrust: SecTrust, forDomain domain: String?) -> TrustEvaluation {
            if serverTrustHook != nil {
                let presented = (SecTrustCopyCertificateChain(secTrust) as? [SecCertificate]) ?? []
                let chain = presented.map { SecCertificateCopyData($0) as Data }
                if let verdict = hookVerdict(on: chain, forDomain: domain) { return verdict }
            }
            return systemEvaluation(of: secTrust, forDomain: domain)
        }

        private func systemEvaluation(of secTrust: SecTrust, forDomain domain: String?) -> TrustEvaluation {
            let secPolicy =
                validatesDomainName ? SecPolicyCreateSSL(true, domain as CFString?) : SecPolicyCreateBasicX509()
            SecTrustSetPolicies(secTrust, secPolicy)
            if !additionalTrustedCertificates.isEmpty {
                let extra = additionalTrustedCertificates.compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
                SecTrustSetAnchorCertificates(secTrust, extra as CFArray)
                SecTrustSetAnchorCertificatesOnly(secTrust, false)
            }
            var failure: CFError?
            let valid = SecTrustEvaluateWithError(secTrust, &failure)
            let certificates = (SecTrustCopyCertificateChain(secTrust) as? [SecCertificate]) ?? []
            let chain = certificates.map { SecCertificateCopyData($0) as Data }
            let verdict: TrustEvaluation =
                valid
                ? .trusted
                : .refused("the system does not trust the chain: \(failure.map { "\($0)" } ?? "unknown reason")")
            let trust = ServerTrust(certificateChain: chain, anchors: [], verificationDate: Date())
            return TrustEvaluator(policy: self, trust: trust, domain: domain, platformVerdict: verdict).run()
        }
    }
#endif

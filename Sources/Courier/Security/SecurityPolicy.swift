import Foundation

/// Decides whether a server's certificate chain is trusted (`AFSecurityPolicy`), with AFNetworking's exact
/// semantics, on every platform.
///
/// ```swift
/// let pinned = try SecurityPolicy.certificates(inDirectory: URL(fileURLWithPath: "certs"))
/// let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: pinned)
/// try manager.setSecurityPolicy(policy)
/// ```
///
/// ``evaluate(_:forDomain:)`` is a pure function of the policy and a ``ServerTrust`` value, so it can be tested
/// without a network. ``NIOTransport`` applies the policy to every new TLS connection before a request byte is
/// written; see the Security article for how.
///
/// Beyond AFNetworking: ``pinnedPublicKeyHashes`` (curl's `--pinnedpubkey sha256//…`), ``additionalTrustedCertificates``
/// (trust a private CA without pinning), and ``clientCertificate`` (mutual TLS).
public struct SecurityPolicy: Sendable, Hashable {
    /// What a pinned policy compares the server's chain with (`AFSSLPinningMode`).
    public enum PinningMode: Sendable, Hashable {
        /// No pinning: the chain must be valid against the trust anchors.
        case none
        /// Some certificate of the chain must equal a pinned certificate byte for byte, and the chain must verify
        /// with the pinned certificates as its only anchors.
        case certificate
        /// Some certificate of the chain must have the public key (SubjectPublicKeyInfo) of a pinned certificate, or
        /// one whose SHA-256 is in ``SecurityPolicy/pinnedPublicKeyHashes``.
        case publicKey
    }

    /// The pinning mode; default ``PinningMode/none``.
    public var pinningMode: PinningMode
    /// The pinned certificates, DER-encoded.
    public var pinnedCertificates: Set<Data>
    /// SHA-256 digests of pinned SubjectPublicKeyInfo structures (32 bytes each), as `curl --pinnedpubkey` and
    /// HPKP use them; compared in ``PinningMode/publicKey`` mode only. See ``publicKeyHash(ofCertificate:)``.
    public var pinnedPublicKeyHashes: Set<Data>
    /// Whether an invalid or untrusted chain (self-signed, expired, unknown CA) may still pass; default `false`.
    public var allowInvalidCertificates: Bool
    /// Whether the certificate's names must match the host; default `true`.
    public var validatesDomainName: Bool
    /// CA certificates (DER) trusted in addition to the system's, without pinning anything. Not in AFNetworking.
    public var additionalTrustedCertificates: Set<Data>
    /// The certificate Courier presents when the server asks for one (mutual TLS). Not in AFNetworking.
    public var clientCertificate: ClientCertificate?
    /// Decides instead of the rest of the policy when set: given the host and the chain, it accepts, rejects, or
    /// lets the policy decide. Sessions set it from ``SessionHooks/serverTrust``; transports that cannot see the
    /// chain ignore it. Not in AFNetworking's policy (its session-level challenge block plays this part).
    public var serverTrustHook: ServerTrustHook?

    /// AFNetworking's default policy: no pinning, the system's trust, the host name checked.
    public static let `default` = SecurityPolicy(pinningMode: .none)

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - pinningMode: what is pinned.
    ///   - pinnedCertificates: DER certificates; see ``certificates(inDirectory:)`` to load files.
    ///   - pinnedPublicKeyHashes: SHA-256 digests of SubjectPublicKeyInfo, used in ``PinningMode/publicKey`` mode.
    public init(
        pinningMode: PinningMode, pinnedCertificates: Set<Data> = [], pinnedPublicKeyHashes: Set<Data> = []
    ) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = pinnedCertificates
        self.pinnedPublicKeyHashes = pinnedPublicKeyHashes
        self.allowInvalidCertificates = false
        self.validatesDomainName = true
        self.additionalTrustedCertificates = []
        self.clientCertificate = nil
        self.serverTrustHook = nil
    }

    /// A public-key policy pinning SHA-256 digests of SubjectPublicKeyInfo given in base64, as
    /// `curl --pinnedpubkey sha256//BASE64` takes them.
    ///
    /// - Throws: ``SecurityPolicyError/invalidPublicKeyHash(_:)`` for a string that is not base64 of 32 bytes.
    public init(pinnedPublicKeyHashesBase64 hashes: [String]) throws {
        var decoded: Set<Data> = []
        for hash in hashes {
            guard let data = Data(base64Encoded: hash), data.count == 32 else {
                throw SecurityPolicyError.invalidPublicKeyHash(hash)
            }
            decoded.insert(data)
        }
        self.init(pinningMode: .publicKey, pinnedPublicKeyHashes: decoded)
    }

    /// Whether the policy is exactly ``default`` (so the platform's own verification is enough).
    public var isDefault: Bool { self == .default }

    /// Whether the policy pins anything (certificates or public-key hashes).
    var hasPins: Bool { !pinnedCertificates.isEmpty || !pinnedPublicKeyHashes.isEmpty }

    /// Whether `trust` may be trusted for `domain` (`evaluateServerTrust:forDomain:`).
    ///
    /// - Parameters:
    ///   - trust: the server's chain, the anchors and the time of verification.
    ///   - domain: the host name; `nil` skips the name check.
    public func evaluate(_ trust: ServerTrust, forDomain domain: String?) -> Bool {
        evaluation(of: trust, forDomain: domain).isTrusted
    }

    /// Like ``evaluate(_:forDomain:)``, with the reason for a refusal (e.g. which pins did not match).
    public func evaluation(of trust: ServerTrust, forDomain domain: String?) -> TrustEvaluation {
        hookVerdict(on: trust.certificateChain, forDomain: domain)
            ?? TrustEvaluator(policy: self, trust: trust, domain: domain).run()
    }

    /// The ``serverTrustHook``'s verdict on the chain the server presented (DER, leaf first), or `nil` when there is
    /// no hook or it leaves the decision to the policy.
    func hookVerdict(on chain: [Data], forDomain domain: String?) -> TrustEvaluation? {
        switch serverTrustHook?.decide(domain ?? "", chain) ?? .useSecurityPolicy {
        case .accept: return .trusted
        case .reject: return .refused("the server-trust hook rejected the server")
        case .useSecurityPolicy: return nil
        }
    }
}

/// The outcome of ``SecurityPolicy/evaluation(of:forDomain:)``.
public struct TrustEvaluation: Sendable, Hashable {
    /// Whether the server may be trusted.
    public var isTrusted: Bool
    /// Why it may not, in a sentence; empty when trusted.
    public var reason: String

    /// A passing evaluation.
    public static let trusted = TrustEvaluation(isTrusted: true, reason: "")

    /// A failing evaluation with its reason.
    public static func refused(_ reason: String) -> TrustEvaluation {
        TrustEvaluation(isTrusted: false, reason: reason)
    }
}

/// Why a policy could not be built.
public enum SecurityPolicyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The string is not base64 of a 32-byte SHA-256 digest.
    case invalidPublicKeyHash(String)
    /// The data is neither a DER nor a PEM certificate.
    case invalidCertificate(String)
    /// A pinning policy was set on a manager whose base URL is not `https` (AFNetworking refuses it too).
    case pinningRequiresHTTPSBaseURL(String?)
    /// A file or directory could not be read.
    case unreadable(path: String, reason: String)
    /// The client certificate or its key could not be read.
    case invalidClientCertificate(String)
    /// The transport cannot apply a non-default policy (URLSessionTransport on Linux: FoundationNetworking shows no
    /// certificate and takes no trust settings).
    case unsupportedByTransport(String)
    /// A pinning policy pins nothing (no certificate where they were looked for, or none given), so it would refuse
    /// every server; the location searched, or `nil` when none was.
    case noPins(searched: String?)

    /// The error in a sentence.
    public var description: String {
        switch self {
        case .invalidPublicKeyHash(let hash):
            return "'\(hash)' is not the base64 of a SHA-256 digest (32 bytes)"
        case .invalidCertificate(let what):
            return "not a DER or PEM certificate: \(what)"
        case .pinningRequiresHTTPSBaseURL(let url):
            return "a pinning security policy needs an https base URL, not \(url ?? "none")"
        case .noPins(let searched):
            return "a pinning security policy with nothing pinned would refuse every server"
                + (searched.map { "; no certificate (.cer, .der, .crt, .pem) in \($0)" } ?? "")
        case .unreadable(let path, let reason):
            return "cannot read \(path): \(reason)"
        case .invalidClientCertificate(let reason):
            return "invalid client certificate: \(reason)"
        case .unsupportedByTransport(let transport):
            return "\(transport) cannot apply a security policy (pinning, extra trust anchors, invalid certificates "
                + "or a client certificate) on this platform; use NIOTransport"
        }
    }
}

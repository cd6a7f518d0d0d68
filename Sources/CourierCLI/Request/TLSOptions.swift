import Courier
import Foundation

/// The TLS flags: `--pin-public-key`, `--pin-cert`, `--cacert`, `--cert`/`--key`, `--insecure`.
///
/// Parsed and checked here (pins are base64 SHA-256 digests, files exist), and turned into the library's security
/// policy in one place, ``apply(to:)``.
struct TLSOptions: Sendable, Hashable {
    /// `--pin-public-key`: base64 SHA-256 digests of a SubjectPublicKeyInfo (as in HPKP and curl's
    /// `--pinnedpubkey sha256//…`).
    var pinnedPublicKeyHashes: [String] = []
    /// `--pin-cert`: certificate files (PEM or DER); one of them must be in the server's chain.
    var pinnedCertificateFiles: [String] = []
    /// `--cacert`: extra trusted roots (PEM or DER).
    var caCertificateFile: String?
    /// `--cert`: the client certificate chain (PEM).
    var clientCertificateFile: String?
    /// `--key`: the client certificate's private key (PEM), when not in the `--cert` file.
    var clientKeyFile: String?
    /// `--insecure`: accept any certificate and host name.
    var insecure = false

    /// No TLS options.
    init() {}

    /// Whether no TLS flag was given (the platform's default trust applies).
    var isEmpty: Bool { self == TLSOptions() }

    /// The flags given, for messages.
    var flagNames: [String] {
        var names: [String] = []
        if !pinnedPublicKeyHashes.isEmpty { names.append("--pin-public-key") }
        if !pinnedCertificateFiles.isEmpty { names.append("--pin-cert") }
        if caCertificateFile != nil { names.append("--cacert") }
        if clientCertificateFile != nil { names.append("--cert") }
        if clientKeyFile != nil { names.append("--key") }
        if insecure { names.append("--insecure") }
        return names
    }

    /// Checks what can be checked without the network: pin syntax, files, flag combinations.
    ///
    /// - Throws: ``CommandFailure`` naming the flag and the value at fault.
    func validate() throws {
        for pin in pinnedPublicKeyHashes {
            let digest = pin.hasPrefix("sha256//") ? String(pin.dropFirst(8)) : pin
            guard let data = Data(base64Encoded: digest), data.count == 32 else {
                throw CommandFailure(
                    .failure, "--pin-public-key “\(pin)” is not a base64 SHA-256 digest (32 bytes in base64)")
            }
        }
        let files =
            pinnedCertificateFiles.map { ("--pin-cert", $0) }
            + [("--cacert", caCertificateFile), ("--cert", clientCertificateFile), ("--key", clientKeyFile)]
            .compactMap { flag, path in path.map { (flag, $0) } }
        for (flag, path) in files where !FileManager.default.isReadableFile(atPath: path) {
            throw CommandFailure(.failure, "\(flag) \(path): the file does not exist or cannot be read")
        }
        if clientKeyFile != nil, clientCertificateFile == nil {
            throw CommandFailure(.failure, "--key needs --cert: the key belongs to a client certificate")
        }
        if insecure, !pinnedPublicKeyHashes.isEmpty || !pinnedCertificateFiles.isEmpty {
            throw CommandFailure(.failure, "--insecure cannot be combined with pinning: pins need a verified chain")
        }
    }

    /// Makes `manager` apply the options to every HTTPS connection; nothing when no TLS flag was given.
    ///
    /// - Throws: ``CommandFailure`` while the library has no security policy.
    func apply(to manager: SessionManager) throws {
        guard !isEmpty else { return }
        // Lead: plug in SecurityPolicy here. Build one policy from the options and set it on the manager:
        //   pins → SecurityPolicy(pinnedPublicKeyHashesBase64:) (strip a "sha256//" prefix),
        //   --pin-cert → pinningMode .certificate with SecurityPolicy.certificates(inFile:),
        //   --cacert → additionalTrustedCertificates, --cert/--key → ClientCertificate(pemCertificateFile:…),
        //   --insecure → allowInvalidCertificates + validatesDomainName = false;
        //   then `try manager.setSecurityPolicy(policy)`. Refusals surface as
        //   CourierError.serverTrustEvaluationFailed, which CommandFailure(error:) already reports with host and reason.
        throw CommandFailure(
            .failure,
            "\(flagNames.joined(separator: ", ")): TLS options are not available yet: this build of Courier has no "
                + "security policy")
    }
}

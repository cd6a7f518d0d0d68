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
    /// - Throws: ``CommandFailure`` naming the file or value that could not be used.
    func apply(to manager: SessionManager) throws {
        guard let policy = try makePolicy() else { return }
        do {
            try manager.setSecurityPolicy(policy)
        } catch {
            throw CommandFailure(.failure, "\(flagNames.joined(separator: ", ")): \(error)")
        }
    }

    /// The security policy for the options, or `nil` for none (the platform's default trust).
    ///
    /// Public-key pins (and the keys of `--pin-cert` certificates) use public-key pinning; `--pin-cert` alone pins
    /// the certificates themselves. `--cacert` adds trust anchors without pinning; `--insecure` accepts any chain
    /// and name.
    func makePolicy() throws -> SecurityPolicy? {
        guard !isEmpty else { return nil }
        let hashes = pinnedPublicKeyHashes.map { $0.hasPrefix("sha256//") ? String($0.dropFirst(8)) : $0 }
        var policy = try convert("--pin-public-key") { try SecurityPolicy(pinnedPublicKeyHashesBase64: hashes) }
        policy.pinningMode = hashes.isEmpty ? (pinnedCertificateFiles.isEmpty ? .none : .certificate) : .publicKey
        for path in pinnedCertificateFiles {
            let certificates = try convert("--pin-cert \(path)") {
                try SecurityPolicy.certificates(inFile: URL(fileURLWithPath: path))
            }
            policy.pinnedCertificates.formUnion(certificates)
        }
        if let caCertificateFile {
            policy.additionalTrustedCertificates = try convert("--cacert \(caCertificateFile)") {
                try SecurityPolicy.certificates(inFile: URL(fileURLWithPath: caCertificateFile))
            }
        }
        if let clientCertificateFile {
            policy.clientCertificate = try convert("--cert \(clientCertificateFile)") {
                try ClientCertificate(
                    pemCertificateFile: URL(fileURLWithPath: clientCertificateFile),
                    privateKeyFile: clientKeyFile.map { URL(fileURLWithPath: $0) })
            }
        }
        if insecure {
            policy.allowInvalidCertificates = true
            policy.validatesDomainName = false
        }
        return policy
    }

    private func convert<Value>(_ flag: String, _ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch {
            throw CommandFailure(.failure, "\(flag): \(error)")
        }
    }
}

import Courier
import Foundation
import NIOSSL

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
    /// `--cert-key-pass`: the passphrase of an encrypted `--key` (or of the `--cert` file's key), or of a PKCS#12
    /// `--cert`.
    var clientKeyPassphrase: String?
    /// `--tls-min` and `--tls-max`: the oldest and newest TLS versions offered (transport settings, not the policy).
    var minimumVersion: TLSVersionChoice?
    var maximumVersion: TLSVersionChoice?

    /// No TLS options.
    init() {}

    /// Whether no flag that makes a security policy was given (the platform's default trust applies).
    var isEmpty: Bool {
        var policyOnly = self
        (policyOnly.minimumVersion, policyOnly.maximumVersion) = (nil, nil)
        return policyOnly == TLSOptions()
    }

    /// Whether `--tls-min` or `--tls-max` was given: they are transport settings, so the command makes its transport.
    var setsVersions: Bool { minimumVersion != nil || maximumVersion != nil }

    /// Sets `--tls-min` and `--tls-max` on a transport's configuration.
    func applyVersions(to configuration: inout NIOTransport.Configuration) {
        configuration.minimumTLSVersion = minimumVersion?.nioVersion
        configuration.maximumTLSVersion = maximumVersion?.nioVersion
    }

    /// Whether the `--cert` file is a PKCS#12 archive (`.p12`, `.pfx`, or DER rather than PEM), which holds the key.
    static func isPKCS12(_ path: String) -> Bool {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".p12") || lowered.hasSuffix(".pfx") { return true }
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let start = (try? handle.read(upToCount: 64)) ?? Data()
        return start.first == 0x30 && !String(decoding: start, as: UTF8.self).contains("-----BEGIN")
    }

    /// The flags given, for messages.
    var flagNames: [String] {
        var names: [String] = []
        if !pinnedPublicKeyHashes.isEmpty { names.append("--pin-public-key") }
        if !pinnedCertificateFiles.isEmpty { names.append("--pin-cert") }
        if caCertificateFile != nil { names.append("--cacert") }
        if clientCertificateFile != nil { names.append("--cert") }
        if clientKeyFile != nil { names.append("--key") }
        if clientKeyPassphrase != nil { names.append("--cert-key-pass") }
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
        if let minimumVersion, let maximumVersion, minimumVersion > maximumVersion {
            throw CommandFailure(
                .failure, "--tls-min \(minimumVersion.rawValue) is newer than --tls-max \(maximumVersion.rawValue)")
        }
        if clientKeyPassphrase != nil, clientCertificateFile == nil {
            throw CommandFailure(.failure, "--cert-key-pass needs --cert: it unlocks the client certificate's key")
        }
        if let clientCertificateFile, clientKeyFile != nil, Self.isPKCS12(clientCertificateFile) {
            throw CommandFailure(.failure, "--key cannot be used with a PKCS#12 --cert, which holds its own key")
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
                if Self.isPKCS12(clientCertificateFile) {
                    return try ClientCertificate(
                        pkcs12: try Data(contentsOf: URL(fileURLWithPath: clientCertificateFile)),
                        passphrase: clientKeyPassphrase ?? "")
                }
                return try ClientCertificate(
                    pemCertificateFile: URL(fileURLWithPath: clientCertificateFile),
                    privateKeyFile: clientKeyFile.map { URL(fileURLWithPath: $0) }, passphrase: clientKeyPassphrase)
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

/// A TLS version for `--tls-min` and `--tls-max`: `1.0` to `1.3` (curl's spelling; `tls1.2` is taken too).
enum TLSVersionChoice: String, Sendable, Hashable, Comparable, CaseIterable {
    case v1_0 = "1.0"
    case v1_1 = "1.1"
    case v1_2 = "1.2"
    case v1_3 = "1.3"

    /// - Throws: ``CommandFailure`` naming the flag and the versions it takes.
    init(_ text: String, flag: String) throws {
        let bare = text.lowercased().hasPrefix("tls") ? String(text.dropFirst(3)).trimmingPrefix("v") : text[...]
        guard let version = TLSVersionChoice(rawValue: String(bare)) else {
            throw CommandFailure(.failure, "\(flag) “\(text)”: use 1.0, 1.1, 1.2 or 1.3")
        }
        self = version
    }

    static func < (lhs: TLSVersionChoice, rhs: TLSVersionChoice) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// NIOSSL's version.
    var nioVersion: TLSVersion {
        switch self {
        case .v1_0: .tlsv1
        case .v1_1: .tlsv11
        case .v1_2: .tlsv12
        case .v1_3: .tlsv13
        }
    }
}

import ArgumentParser

/// The TLS flags every command that connects takes: `--pin-public-key`, `--pin-cert`, `--cacert`, `--cert`, `--key`
/// and `--insecure`.
struct TLSFlags: ParsableArguments {
    @Option(help: "Pin a public key: base64 SHA-256 of its SubjectPublicKeyInfo (repeatable).")
    var pinPublicKey: [String] = []
    @Option(help: "Pin a certificate file, PEM or DER (repeatable).")
    var pinCert: [String] = []
    @Option(help: "Trust the CA certificates in this file.")
    var cacert: String?
    @Option(help: "Client certificate chain (PEM).")
    var cert: String?
    @Option(help: "Private key of the client certificate (PEM).")
    var key: String?
    @Flag(help: "Accept any server certificate and host name.")
    var insecure = false

    /// The flags, checked.
    ///
    /// - Throws: ``CommandFailure`` for flags that contradict each other.
    func options() throws -> TLSOptions {
        var tls = TLSOptions()
        tls.pinnedPublicKeyHashes = pinPublicKey
        tls.pinnedCertificateFiles = pinCert
        tls.caCertificateFile = cacert
        tls.clientCertificateFile = cert
        tls.clientKeyFile = key
        tls.insecure = insecure
        try tls.validate()
        return tls
    }
}

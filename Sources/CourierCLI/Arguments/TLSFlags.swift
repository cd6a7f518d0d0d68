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
    @Option(help: "Client certificate: a PEM chain (key inside or in --key), or a PKCS#12 file (.p12, .pfx).")
    var cert: String?
    @Option(help: "Private key of the client certificate (PEM).")
    var key: String?
    @Option(help: "Passphrase of the client certificate's key (PEM) or of a PKCS#12 --cert.")
    var certKeyPass: String?
    @Option(help: ArgumentHelp("Oldest TLS version to offer: 1.0, 1.1, 1.2 or 1.3.", valueName: "VERSION"))
    var tlsMin: String?
    @Option(help: ArgumentHelp("Newest TLS version to offer: 1.0, 1.1, 1.2 or 1.3.", valueName: "VERSION"))
    var tlsMax: String?
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
        tls.clientKeyPassphrase = certKeyPass
        tls.minimumVersion = try tlsMin.map { try TLSVersionChoice($0, flag: "--tls-min") }
        tls.maximumVersion = try tlsMax.map { try TLSVersionChoice($0, flag: "--tls-max") }
        try tls.validate()
        return tls
    }
}

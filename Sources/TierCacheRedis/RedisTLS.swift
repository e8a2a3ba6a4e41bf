import NIOSSL
import TierCache

/// TLS for a ``RedisTier``'s connections (Redis 6+ built with TLS, managed Redis services).
///
/// TLS is on for every connection of a tier when ``RedisTier/Configuration/tls`` is set, or when
/// any of its endpoints was written `rediss://` (then with these defaults: the system's trust
/// roots and full verification). The server's certificate is verified against the trust roots
/// and, with ``Verification/full``, must name the server: either the host name (``serverName``,
/// or the endpoint's host when it is a name) or the address connected to (SwiftNIO SSL's rule).
/// Cluster nodes announce themselves by address, so a cluster whose certificates carry neither
/// the nodes' addresses nor a common name needs ``serverName`` or
/// ``Verification/noHostnameVerification`` (the chain is still verified).
///
/// The files are read once, when the tier is created; a file that cannot be read or parsed is a
/// `TierCacheError` (`invalidConfiguration`) then, not a failure of every command later.
public struct RedisTLS: Sendable, Hashable {
    /// Which certificate authorities the tier trusts.
    public enum Trust: Sendable, Hashable {
        /// The operating system's trust store.
        case system
        /// The certificates in a PEM file (a private CA, as Redis deployments often use).
        case certificateFile(String)
    }

    /// How much of the server's certificate is checked.
    public enum Verification: Sendable, Hashable {
        /// The chain against the trust roots, and the host name (``serverName`` or the
        /// endpoint's host) against the certificate. The default.
        case full
        /// The chain only: for clusters whose nodes are reached by addresses their certificates
        /// do not name.
        case noHostnameVerification
    }

    /// The certificate authorities to trust; ``Trust/system`` by default.
    public var trust: Trust
    /// How the server's certificate is checked; ``Verification/full`` by default.
    public var verification: Verification
    /// The name to verify and to send in SNI, when it differs from the endpoint's host.
    public var serverName: String?
    /// A client certificate (PEM) for servers that require one (`tls-auth-clients yes`), with
    /// ``clientKeyFile``.
    public var clientCertificateFile: String?
    /// The client certificate's private key (PEM).
    public var clientKeyFile: String?

    /// TLS settings; by default the system's trust roots and full verification.
    public init(
        trust: Trust = .system, verification: Verification = .full, serverName: String? = nil,
        clientCertificateFile: String? = nil, clientKeyFile: String? = nil
    ) {
        self.trust = trust
        self.verification = verification
        self.serverName = serverName
        self.clientCertificateFile = clientCertificateFile
        self.clientKeyFile = clientKeyFile
    }

    /// The context every connection of the tier shares (made once: it loads the trust store).
    func makeContext() throws(TierCacheError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = verification == .full ? .fullVerification : .noHostnameVerification
        do {
            if case .certificateFile(let path) = trust {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
            }
            switch (clientCertificateFile, clientKeyFile) {
            case (nil, nil):
                break
            case (let certificate?, let key?):
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            default:
                throw TierCacheError(
                    .invalidConfiguration, "a client certificate needs both clientCertificateFile and clientKeyFile")
            }
            return try NIOSSLContext(configuration: configuration)
        } catch let error as TierCacheError {
            throw error
        } catch {
            throw TierCacheError(
                .invalidConfiguration, "the Redis TLS settings could not be loaded", underlying: "\(error)")
        }
    }
}

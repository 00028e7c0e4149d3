import ArchivePublishing
import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest

/// How a console listens and what it acts with (`clientctl console`'s flags).
public struct ConsoleConfiguration: Sendable {
    /// The address to listen on (`127.0.0.1`).
    public var host: String
    /// The port (0: any free port).
    public var port: Int
    /// The operators file (`clientctl operator add`): read at each login and each request,
    /// so a removed operator's session ends at its next request.
    public var operators: String
    /// The collector's base URL (`http://127.0.0.1:9400/`).
    public var collector: String
    /// The collector's read token (fleet, devices, problems).
    public var readToken: String
    /// The collector's admin token (admit, reject).
    public var adminToken: String
    /// The release folder root (`publish --out`): its channels' manifests and restrictions.
    public var releases: String
    /// Makes the rollout role's signers, one set for each act (a signing key stays in the
    /// task that signs): they sign restrictions and the audit trail (the first one). Never
    /// the release key: nothing the console signs ships or hurries a release.
    public var signers: @Sendable () throws -> [any DocumentSigner]
    /// The audit trail.
    public var audit: String
    /// Where a channel's restriction goes after an act (nil: it stays in ``releases``).
    public var push: ReleasePush?
    /// The URL operators reach the console at, behind a reverse proxy (`https://ops.example/`):
    /// its origin is the one POSTs must come from.
    public var publicURL: String?
    /// Served over TLS: cookies carry `Secure`, the origin is `https://`.
    public var tls: Bool
    /// The TLS certificate chain and its key (PEM files; `--tls-cert`, `--tls-key`): the
    /// console serves HTTPS. nil: plain HTTP (behind a proxy that terminates TLS, or on
    /// loopback).
    public var tlsFiles: (certificate: String, key: String)? {
        didSet { tls = tlsFiles != nil || tls }
    }
    /// Audit entries a page.
    public var auditPageSize = 50

    /// A configuration.
    public init(
        host: String = "127.0.0.1", port: Int = 8090, operators: String, collector: String, readToken: String, adminToken: String,
        releases: String, signers: @escaping @Sendable () throws -> [any DocumentSigner], audit: String, push: ReleasePush? = nil,
        publicURL: String? = nil, tls: Bool = false
    ) {
        self.host = host
        self.port = port
        self.operators = operators
        self.collector = collector.hasSuffix("/") ? collector : collector + "/"
        self.readToken = readToken
        self.adminToken = adminToken
        self.releases = releases
        self.signers = signers
        self.audit = audit
        self.push = push
        self.publicURL = publicURL
        self.tls = tls
    }

    /// Cookies are `Secure`: under TLS, or behind a proxy reached over https.
    var secureCookies: Bool { tls || publicURL?.lowercased().hasPrefix("https://") == true }
}

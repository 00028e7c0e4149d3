import ArchivePublishing
import ArgumentParser
import AuditTrail
import ClientFoundation
import CommandSupport
import ConsoleAccess
import Foundation
import OperatorConsole
import ReleaseSigning
import SignedManifest

/// `clientctl console`: the operator's web console (docs/guides/console.md).
struct ConsoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "Run the operator's web console: see the fleet, halt, lift or cap a release, admit devices.",
        discussion: """
            Serves pages without script on --listen: per channel of --out the release and \
            what holds it back, the fleet's figures and what breaks per version (from \
            --collector with the read token), the devices waiting for admission, and the \
            audit trail. Operators log in with the names and passwords of --operators \
            (clientctl operator add); a viewer sees, an operator acts.

            Acts: halt the channel's release, lift a halt, cap its percent downwards (each a \
            restriction signed with --key, the rollout role's key: nothing the console signs \
            ships or hurries a release), admit or reject a device (the collector's admin API, \
            --admin-token-file). --push uploads the channel after an act, as push does; \
            without it the restriction stays in --out for the next push. Every act, every \
            login and every refused attempt is appended to --audit, signed with --key.

            Prints `console on http://HOST:PORT/` on stdout once listening; SIGTERM or \
            SIGINT stop it. Behind a reverse proxy give --public-url (the URL operators open): \
            POSTs must come from its origin, and an https one makes cookies Secure.

            Exit status: 64 bad flags or a release key as --key, 65 a key, token, TLS or \
            operators file refused, 66 a file missing, 73 cannot listen.

            Examples:
              clientctl console --operators operators.json \\
                  --collector http://127.0.0.1:9400/ --token-file read.token \\
                  --admin-token-file admin.token --out releases \\
                  --key rollout.pem --audit audit.jsonl
              clientctl console --listen 127.0.0.1:8090 \\
                  --public-url https://ops.example.com/ \\
                  --operators /etc/clientctl/operators.json \\
                  --collector http://127.0.0.1:9400/ --token-file read.token \\
                  --admin-token-file admin.token --out releases \\
                  --key rollout.pem --audit /var/lib/clientctl/audit.jsonl \\
                  --push s3://cdn-origin/notes
            """
    )

    @Option(help: ArgumentHelp("The address and port to listen on (HOST:PORT; port 0 = any free port).", valueName: "HOST:PORT"))
    var listen = "127.0.0.1:8090"

    @Option(help: ArgumentHelp("The operators file (clientctl operator add).", valueName: "FILE"))
    var operators: String

    @Option(help: ArgumentHelp("The collector's base URL.", valueName: "URL"))
    var collector: String

    @Option(name: .customLong("token-file"), help: ArgumentHelp("A file holding the collector's read token.", valueName: "FILE"))
    var tokenFile: String

    @Option(name: .customLong("admin-token-file"), help: ArgumentHelp("A file holding the collector's admin token.", valueName: "FILE"))
    var adminTokenFile: String

    @Option(help: ArgumentHelp("Release folder root (as given to publish --out).", valueName: "RELEASES"))
    var out: String

    @Option(help: ArgumentHelp("The rollout role's private key (PEM): it signs restrictions and the audit trail.", valueName: "ROLLOUT.pem"))
    var key: String

    @Option(help: ArgumentHelp("The audit trail to append to (created if missing).", valueName: "FILE"))
    var audit: String

    @Option(name: .long, help: ArgumentHelp("After an act, push the channel to s3://BUCKET/PREFIX as push does.", valueName: "S3-URL"))
    var push: String?

    @OptionGroup var store: S3StoreOptions

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("Serve HTTPS with this certificate chain (PEM).", valueName: "CERT.pem"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The TLS certificate's private key (PEM).", valueName: "KEY.pem"))
    var tlsKey: String?

    @Option(
        name: .customLong("public-url"),
        help: ArgumentHelp("The URL operators open the console at, behind a reverse proxy.", valueName: "URL"))
    var publicURL: String?

    func validate() throws {
        guard let (host, port) = ListenArgument.hostPort(listen) else {
            throw ValidationError("--listen \(listen): not HOST:PORT with a port 0–65535 (127.0.0.1:8090)")
        }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if push == nil && (store.endpoint != nil || store.region != nil) { throw ValidationError("--endpoint and --region go with --push") }
        guard let url = URL(string: collector), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil
        else {
            throw ValidationError("--collector \(collector): not an http: or https: URL")
        }
        do {
            _ = try OriginCheck(listeningOn: host, port: max(port, 1), tls: tlsCert != nil, publicURL: publicURL)
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() async throws {
        try await runReportingErrors {
            guard let (host, port) = ListenArgument.hostPort(listen) else { throw ValidationError("--listen \(listen): not HOST:PORT") }
            _ = try OperatorFile.load(operators)
            guard FileManager.default.fileExists(atPath: out) else { throw CommandError(.notFound, "--out \(out) does not exist") }
            try AuditTrail.checkAppendable(audit)
            let readToken = try FleetQuery.token(file: tokenFile)
            let adminToken = try FleetQuery.token(file: adminTokenFile)
            // The key is read once here (a bad file fails now) and made again for each act:
            // a signing key stays in the task that signs.
            let pem = try Self.keyText(key)
            let keyID = try Ed25519.PrivateKey(pem: pem, source: key).publicKey.keyId
            try Self.refuseReleaseKey(keyID, releases: out)
            let keyPath = key
            var configuration = ConsoleConfiguration(
                host: host, port: port, operators: operators, collector: collector, readToken: readToken, adminToken: adminToken,
                releases: out, signers: { [try Ed25519.PrivateKey(pem: pem, source: keyPath)] }, audit: audit,
                push: try push.map { try store.push(to: $0) }, publicURL: publicURL,
                tls: tlsCert != nil)
            if let tlsCert, let tlsKey { configuration.tlsFiles = (certificate: tlsCert, key: tlsKey) }
            let console = OperatorConsole(configuration: configuration)
            try await console.runService { port in
                let shown = host.contains(":") ? "[\(host)]" : host
                Console.out(Data("console on \(tlsCert == nil ? "http" : "https")://\(shown):\(port)/\n".utf8))
            }
            printError("clientctl console: stopped")
        }
    }

    /// Refuses a `--key` that a channel of `releases` trusts as a release key: the console
    /// holds the rollout key only, so nothing it signs can ship a release.
    static func refuseReleaseKey(_ keyID: String, releases: String) throws {
        let channels = (try? FileManager.default.contentsOfDirectory(atPath: releases)) ?? []
        for channel in channels.sorted() {
            guard let root = try? ReleaseRoots.newest(inChannelFolder: releases + "/" + channel) else { continue }
            if root.release.keyIds.contains(keyID) || root.root.keyIds.contains(keyID) {
                throw CommandError(
                    .invalidArgument,
                    "--key: key \(keyID) is a release or root key of channel \(channel): the console holds the rollout key only")
            }
        }
    }

    /// The PEM text of the key file at `path`.
    static func keyText(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 64 * 1024 else {
            throw CommandError(.notFound, "--key \(path): cannot be read")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

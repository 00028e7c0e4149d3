import ArgumentParser
import ClientFoundation
import CommandSupport
import FleetCollector
import FleetPage
import Foundation
import SignedManifest

/// `clientctl collect`: the fleet report collector (docs/fleet-reports.md#the-collector).
struct CollectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collect",
        abstract: "Run a fleet report collector: devices POST reports, release engineers read the fleet.",
        discussion: """
            Listens on --listen for batches of device reports (POST /v1/reports, no token: \
            devices hold no secret) and stores them in --database: sqlite:PATH (one file, WAL) \
            or postgres://USER@HOST:PORT/DB (several collectors on one database). Every batch \
            is checked whole: a malformed, oversized, wrongly typed or unknown-schema batch gets \
            a 4xx naming why and nothing of it is stored; duplicates by (device, seq) are skipped.

            Reads need the read token (a file only its owner may read, chmod 600): \
            GET /v1/fleet?app=ID&channel=NAME (the fleet summary as JSON) and GET /metrics \
            (Prometheus) with `Authorization: Bearer TOKEN`; GET / (the page) with the token \
            as the HTTP basic auth password. GET /healthz answers "ok" to anyone.

            A flood from one address or one device id gets 429 with Retry-After; reports \
            received more than --retention-days ago are deleted hourly. Prints \
            `collecting on http://HOST:PORT/` on stderr once listening; SIGTERM or SIGINT stop it.

            Exit status: 64 bad flags or database URL, 66 token file unreadable, 78 token file \
            readable by others, 73 database cannot be opened, 69 cannot listen.

            Examples:
              clientctl collect --listen 127.0.0.1:9400 \\
                  --database sqlite:/var/lib/clientctl-collect/reports.db \\
                  --read-token-file /etc/clientctl-collect/read-token
              clientctl collect --listen 0.0.0.0:9400 \\
                  --database postgres://collect@db.internal:5432/reports \\
                  --read-token-file /etc/clientctl-collect/read-token --retention-days 30
              curl -H "Authorization: Bearer $(cat read-token)" \\
                  "http://127.0.0.1:9400/v1/fleet?app=com.example.notes&channel=stable"
            """
    )

    @Option(help: ArgumentHelp("The address and port to listen on (HOST:PORT, [::1]:PORT; port 0 = any free port).", valueName: "HOST:PORT"))
    var listen: String

    @Option(help: ArgumentHelp("Where reports are kept: sqlite:PATH or postgres://USER@HOST:PORT/DB.", valueName: "URL"))
    var database: String

    @Option(
        name: .customLong("read-token-file"),
        help: ArgumentHelp("A file holding the read token (16+ printable characters; mode 600).", valueName: "FILE"))
    var readTokenFile: String

    @Option(name: .customLong("retention-days"), help: ArgumentHelp("Days reports are kept (1–3650).", valueName: "DAYS"))
    var retentionDays = 90

    @Option(
        name: .customLong("rate-per-address"),
        help: ArgumentHelp("Batches a minute accepted from one source address (burst: a quarter of it).", valueName: "N"))
    var ratePerAddress: Double = RateLimits.standard.perAddressPerMinute

    @Option(
        name: .customLong("rate-per-device"),
        help: ArgumentHelp("Batches a minute accepted from one device id (burst: a quarter of it).", valueName: "N"))
    var ratePerDevice: Double = RateLimits.standard.perDevicePerMinute

    @Option(
        help: ArgumentHelp("Which devices' reports count: open, listed (only admitted keys) or manual (new keys wait as pending).", valueName: "MODE")
    )
    var admission: AdmissionArgument = AdmissionArgument(mode: .open)

    @Option(
        name: .customLong("admin-token-file"),
        help: ArgumentHelp("A file holding the admin token (fleet admit, reject, forget; 16+ printable characters; mode 600).", valueName: "FILE"))
    var adminTokenFile: String?

    @Option(
        name: .customLong("admit-file"),
        help: ArgumentHelp("A file of device keys to admit (one per line), read at start and whenever it changes.", valueName: "FILE"))
    var admitFile: String?

    @Option(
        name: .customLong("admit-file-key"),
        help: ArgumentHelp("A public key (PEM) that must have signed the admit file: FILE.sig holds the signature.", valueName: "KEY.pub.pem"))
    var admitFileKey: String?

    @OptionGroup var limits: CollectorLimitOptions

    func validate() throws {
        if admitFileKey != nil && admitFile == nil { throw ValidationError("--admit-file-key goes with --admit-file") }
        guard ListenArgument.hostPort(listen) != nil else {
            throw ValidationError("--listen \(listen): not HOST:PORT with a port 0–65535 (127.0.0.1:9400)")
        }
        guard CollectorConfiguration.retentionRange.contains(retentionDays) else {
            throw ValidationError("--retention-days \(retentionDays) is out of range: 1 to 3650")
        }
        for (flag, rate) in [("--rate-per-address", ratePerAddress), ("--rate-per-device", ratePerDevice)]
        where !(rate.isFinite && rate >= 1 && rate <= 1_000_000) {
            throw ValidationError("\(flag) \(rate) is out of range: 1 to 1000000 batches a minute")
        }
        try limits.check()
        do {
            _ = try DatabaseURL(database)
        } catch let error as FleetCollectorError {
            throw ValidationError(error.message)
        }
    }

    func run() async throws {
        try await runReportingErrors {
            guard let (host, port) = ListenArgument.hostPort(listen) else { throw ValidationError("--listen \(listen): not HOST:PORT") }
            let token = try ReadToken.load(path: readTokenFile)
            let adminToken = try adminTokenFile.map { try ReadToken.load(path: $0, flag: "--admin-token-file") }
            let admitSigner = try admitFileKey.map { try Ed25519.PublicKey(pemFile: $0) }
            if let admitFile { _ = try AdmitFile.keys(path: admitFile, signer: admitSigner) }
            let url = try DatabaseURL(database)
            let store = try await StoreOpener.open(url)
            var configuration = CollectorConfiguration(
                host: host, port: port, readToken: token, retentionDays: retentionDays,
                rateLimits: RateLimits(perAddressPerMinute: ratePerAddress, perDevicePerMinute: ratePerDevice, maxKeys: 100_000),
                idleTimeout: limits.idleTimeout.duration)
            limits.apply(to: &configuration)
            configuration.admission = admission.mode
            configuration.adminToken = adminToken
            configuration.admitFile = admitFile
            configuration.admitFileKey = admitSigner
            let collector = Collector(configuration: configuration, store: store, page: { FleetHTML.render($0) })
            let systemd = SystemdNotifier()
            try await collector.runService { port in
                let shown = host.contains(":") ? "[\(host)]" : host
                printError("collecting on http://\(shown):\(port)/ into \(url) (admission: \(admission.mode.rawValue))")
                _ = systemd?.ready(status: "collecting on \(shown):\(port) into \(url)")
            }
            _ = systemd?.stopping()
            printError("clientctl collect: stopped")
        }
    }
}

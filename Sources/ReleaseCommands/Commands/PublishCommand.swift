import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import SafeArchive
import SignedManifest
import StrictJSON

/// `clientctl publish DIR …`: pack, hash, sign and write a release folder.
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Pack a built client folder into a signed release.",
        discussion: """
            Packs DIR (its top level is the web root; index.html is required) into a \
            reproducible archive, signs a manifest with --key and writes the release folder:
              OUT/CHANNEL/vX.Y.Z.tar.gz   immutable archive
              OUT/CHANNEL/manifest.json   the newest release
              OUT/CHANNEL/index.json      every release, newest first
            Upload OUT to any static web server or CDN: cache archives as immutable, revalidate \
            manifest.json and index.json.

            Publishing a version again with identical bytes and settings changes nothing \
            (exit 0). A version already published with other bytes, a version not above the \
            channel's newest, or a DIR with symlinks, special files or unreadable files is \
            refused (exit 65) naming the reason or path. A clock more than a year after the \
            channel's newest release (a release machine whose clock reads 2099 would make \
            every later release a replay to devices) is refused, exit 77, unless \
            --allow-far-future says it is right.

            --base-url is the public URL of OUT: manifests then carry absolute archive URLs \
            (BASE/CHANNEL/vX.Y.Z.tar.gz) instead of URLs relative to manifest.json. \
            --expires takes an RFC 3339 UTC time or Nd (N days from now).

            Delta updates: publish also writes OUT/CHANNEL/patches/SHA256.zst, a zstd patch \
            from each of the newest --delta-bases older releases (default 3), the signed \
            file list files/SHA256.json and each file's content once as objects/SHA256, and \
            prints what each path costs a device. Devices holding one of those releases \
            download the patch; others link the files they hold and download the rest, or \
            take the archive, whichever is cheapest. --delta-bases 0 writes none of it.

            When devices switch: --apply signs an apply policy into the manifest \
            (docs/apply-policies.md). next-start (the default) waits for the host's next \
            start, next-navigation for the page's next navigation, idle for --idle-seconds \
            without input, window for the device's maintenance windows (init --apply-window), \
            now switches at once. Past --deadline (48h after the release, or a time) a device \
            switches at its next idle moment, and at most --grace later whatever holds. A \
            malformed value, or a deadline not after the release, is refused (exit 64).

            Examples:
              clientctl publish build/ --app com.example.notes --channel stable \\
                  --version 1.4.0 --min-shell 2.0.0 --key keys/release.pem \\
                  --out releases
              clientctl publish build/ --app com.example.notes --channel stable \\
                  --version 1.5.0 --min-shell 2.0.0 --key keys/release.pem \\
                  --out releases --rollout 0:5,1d:25,2d:100 --revoke 1.4.0
              clientctl publish build/ --app com.example.notes --channel beta \\
                  --version 1.5.0-beta.1 --min-shell 2.0.0 --max-shell 2.99.0 \\
                  --key keys/release.pem --out releases --format zip \\
                  --expires 30d --base-url https://cdn.example.com/notes
              clientctl publish build/ --app com.example.notes --channel stable \\
                  --version 1.6.0 --min-shell 2.0.0 --key keys/release.pem \\
                  --out releases --apply window --deadline 48h --grace 2h
              # Stores 12 and 14 first (devices decide from their labels)
              clientctl publish build/ --app com.example.notes --channel stable \\
                  --version 1.7.0 --min-shell 2.0.0 --key keys/release.pem \\
                  --out releases --target 'store in (12, 14)'
            """
    )

    @Argument(help: ArgumentHelp("The built client folder.", valueName: "DIR"))
    var dir: String

    @Option(name: .long, help: ArgumentHelp("Application id, e.g. com.example.notes.", valueName: "ID"))
    var app: String

    @Option(name: .long, help: ArgumentHelp("Release channel, e.g. stable.", valueName: "NAME"))
    var channel: String

    @Option(name: .long, help: ArgumentHelp("Release version (SemVer 2.0, no 'v').", valueName: "SEMVER"))
    var version: Version

    @Option(name: .customLong("min-shell"), help: ArgumentHelp("Lowest shell version that may run it.", valueName: "SEMVER"))
    var minShell: Version

    @Option(name: .customLong("max-shell"), help: ArgumentHelp("Highest shell version that may run it (inclusive).", valueName: "SEMVER"))
    var maxShell: Version?

    @OptionGroup var signing: SigningOptions

    @Option(name: .long, help: ArgumentHelp("Release folder root.", valueName: "RELEASES"))
    var out: String

    @Option(name: .customLong("base-url"), help: ArgumentHelp("Public URL of the release folder root.", valueName: "URL"))
    var baseURL: String?

    @Option(name: .long, help: ArgumentHelp("Archive format.", valueName: "FORMAT"))
    var format: ArchiveFormat = .tarGzip

    @Option(name: .long, help: ArgumentHelp("Expiry: RFC 3339 UTC time or Nd (days from now).", valueName: "RFC3339|Nd"))
    var expires: Expiry?

    @Option(name: .long, help: ArgumentHelp("A staged rollout: a percent or TIME:PERCENT steps (0:5,1d:25,2d:100).", valueName: "SPEC"))
    var rollout: RolloutArgument?

    @Option(name: .long, help: ArgumentHelp("A version devices must leave; repeat for several.", valueName: "VERSION"))
    var revoke: [Version] = []

    @OptionGroup var target: TargetOption

    @OptionGroup var placement: PlacementOptions

    @OptionGroup var delta: DeltaOptions

    @OptionGroup var applyPolicy: ApplyOptions

    @Flag(
        name: .customLong("include-hidden"),
        help: "Also publish files and folders whose name starts with '.' (.env, .well-known/); skipped by default.")
    var includeHidden = false

    @Flag(
        name: .customLong("allow-far-future"),
        help: "Publish even when this machine's clock reads more than a year after the channel's newest release.")
    var allowFarFuture = false

    @OptionGroup var output: OutputOptions

    @OptionGroup var audit: AuditOptions

    func validate() throws {
        _ = try target.expression()
        if placement.placesRollout, rollout == nil { throw ValidationError("--draw and --draw-from go with --rollout") }
        try delta.check()
    }

    func run() async throws {
        try await runReportingErrors {
            // Zip entries carry local DOS times: publish in UTC so archives are the same bytes
            // on every machine. Set before any archive work, in this single command.
            setenv("TZ", "UTC0", 1)
            tzset()
            let now = Date()
            let expiry = try expires?.date(now: now)
            var request = PublishRequest(
                source: dir, app: app, channel: channel, version: version, minShellVersion: minShell, maxShellVersion: maxShell,
                outputDirectory: out, baseURL: baseURL, format: format, expires: expiry, now: now)
            request.includeHidden = includeHidden
            request.rollout = try rollout.map { try placement.placed($0.rollout(start: now)) }
            request.alongside = placement.alongside
            request.revoked = revoke
            request.target = try target.expression()
            request.deltaBases = delta.deltaBases
            request.allowFarFuture = allowFarFuture
            request.apply = try applyPolicy.policy(releasedAt: Date(timeIntervalSince1970: floor(now.timeIntervalSince1970)))
            let signers = try signing.signers()
            let state = { ChannelAuditState(releases: out, channel: channel).text }
            let result = try await audit.recording("publish", target: "\(channel) \(version)", signer: signers[0], state: state) {
                try await Publisher.publish(request, signers: signers)
            }
            result.show(json: output.json)
        }
    }
}

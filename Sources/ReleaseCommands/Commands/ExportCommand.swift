import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl export CHANNEL --from RELEASES --to DIR`: a channel's releases on offline media.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a channel's signed releases to a USB stick or folder for devices with no network.",
        discussion: """
            Writes DIR/clientctl-media/APP/CHANNEL/: the trust roots, manifest.json, \
            index.json, the rollout role's restriction, the archives and delta patches of \
            the current release and of those it offers alongside or pins (and of each \
            --version), the cohort files their targets read, and media.json, signed by \
            the release role, listing every file with its size and SHA-256. A device runs \
            `clientctl install --from DIR` (or the package's udev rule does when the stick \
            is mounted) and verifies all of it as an online release (docs/offline-media.md).

            Other apps and channels already in DIR are kept, so one stick can serve several. \
            The channel's folder is replaced as a whole: a stick pulled out half-way holds \
            the previous export or none.

            --offline-expires (an RFC 3339 UTC time or Nd) lets the media vouch for its \
            releases longer than their online `expires`, up to the trust root's own expiry; \
            without it, the manifests' own expiry holds offline too.

            Examples:
              clientctl export stable --from releases --to stick --key release.pem
              clientctl export stable --from releases --to stick --key release.pem \\
                --offline-expires 180d
              clientctl export stable --from releases --to stick --key release.pem \\
                --version 1.4.0      # an older release as well
            """
    )

    @Argument(help: ArgumentHelp("The release channel, e.g. stable.", valueName: "CHANNEL"))
    var channel: String

    @Option(name: .long, help: ArgumentHelp("Release folder root (as given to publish --out).", valueName: "RELEASES"))
    var from: String

    @Option(name: .long, help: ArgumentHelp("The media's folder, e.g. a stick's mount point.", valueName: "DIR"))
    var to: String

    @Option(name: .customLong("version"), help: ArgumentHelp("An older release of index.json to carry as well; repeat.", valueName: "VERSION"))
    var versions: [Version] = []

    @Option(
        name: .customLong("offline-expires"),
        help: ArgumentHelp("Until when the media vouches for its releases (RFC 3339 UTC or Nd).", valueName: "TIME"))
    var offlineExpires: Expiry?

    @OptionGroup var signing: SigningOptions

    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let now = Date(timeIntervalSince1970: floor(Date().timeIntervalSince1970))
            var request = MediaExportRequest(releases: from, channel: channel, destination: to, versions: versions, now: now)
            request.offlineExpires = try offlineExpires.map { try $0.date(now: now) }
            let result = try await MediaExport.export(request, signers: try signing.signers())
            let index = result.index
            if output.json {
                Console.out(Data(index.jsonBytes()))
                return
            }
            let versions = index.releases.map(\.version.description).joined(separator: ", ")
            let until = index.offlineExpires.map { "; media vouches until \(RFC3339.format($0))" } ?? ""
            print(
                "\(index.app) \(versions) on \(index.channel): exported to \(result.folder) (\(index.files.count + 1) files with media.json, \(result.bytes) bytes)\(until)"
            )
        }
    }
}

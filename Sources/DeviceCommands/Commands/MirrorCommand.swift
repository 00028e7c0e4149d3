import ArgumentParser
import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import CommandSupport
import Foundation
import SiteMirror

/// `clientctl mirror MANIFEST_URL --trust KEY --to DIR`: a verified copy of one channel.
struct MirrorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mirror",
        abstract: "Keep a verified copy of a channel in a folder a static server serves on the site's network.",
        discussion: """
            Copies what devices of the channel read (trust roots, the manifest, index.json, \
            restriction.json, the archives and patches of the releases they may take, cohort \
            files) into DIR under the origin's path: the manifest at \
            https://origin/releases/stable/manifest.json goes to DIR/releases/stable/manifest.json. \
            Every file is verified as a device verifies it, with the keys devices trust, and \
            renamed into place only when all verified, the manifest last. Holding the previous \
            release, it takes the patch from the origin and rebuilds the archive from it (checked \
            against the signed SHA-256), so a site costs the origin one patch. A manifest older \
            than the one held is refused. Archives and patches no release of the index names are \
            removed. One channel a call: run it from a timer, once per channel, into the same DIR.

            Exit status: 0 done (also when nothing changed), 65 the origin served something that \
            does not verify, a stale or an older manifest (DIR is left as the last good run left \
            it), 64 a bad flag, 66 a key file missing, 69 the origin unreachable, 75 another run \
            holds DIR, 73 DIR cannot be written or holds a symbolic link on a path the run uses \
            (nothing is written through it). Serve DIR with any static server (nginx, \
            docs/guides/running-devices.md#a-site-mirror); devices name it with `init --mirror`.

            Examples:
              clientctl mirror https://updates.example.com/releases/stable/manifest.json \\
                --trust /etc/clientctl/release.pub.pem --to /srv/mirror
              clientctl mirror https://updates.example.com/releases/beta/manifest.json \\
                --trust /etc/clientctl/release.pub.pem --to /srv/mirror --json
            """
    )

    @Argument(help: ArgumentHelp("The origin's URL of the channel's manifest.", valueName: "MANIFEST_URL"))
    var manifestURL: String

    @Option(name: .long, help: ArgumentHelp("A release public key devices trust (PEM); repeatable.", valueName: "KEY.pub.pem"))
    var trust: [String] = []

    @Option(name: .long, help: ArgumentHelp("The mirror's folder (created if missing).", valueName: "DIR"))
    var to: String

    @Flag(name: .long, help: "Allow http: to a host other than loopback (as a device's allowInsecureHTTP).")
    var allowInsecureHTTP = false

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !trust.isEmpty else { throw ValidationError("--trust KEY.pub.pem is required: the mirror verifies with the keys devices trust") }
        guard let url = URL(string: manifestURL), url.scheme != nil, url.host != nil else {
            throw ValidationError("\(manifestURL) is not an absolute http: or https: URL")
        }
    }

    func run() async throws {
        // Zip archives carry local times: rebuilt in UTC, as `publish` writes them.
        setenv("TZ", "UTC0", 1)
        tzset()
        try await runReportingErrors {
            guard let url = URL(string: manifestURL) else { throw ValidationError("\(manifestURL) is not a URL") }
            var request = MirrorRequest(manifestURL: url, trustedKeys: try trust.map(SiteMirror.readKey), folder: to.absoluteStandardizedPath)
            request.allowInsecureHTTP = allowInsecureHTTP
            let report = try await SiteMirror(downloader: Downloader()).run(request)
            for note in report.notes { printError("note: \(note)") }
            if output.json {
                try printJSON(report)
            } else {
                for path in report.written { print(path) }
                let rebuilt = report.rebuilt.isEmpty ? "" : ", \(report.rebuilt.count) archive(s) rebuilt from patches"
                let pruned = report.pruned.isEmpty ? "" : ", \(report.pruned.count) file(s) pruned"
                printError(
                    "\(report.app) \(report.channel) \(report.version) mirrored at \(report.manifest): "
                        + (report.changed ? "\(report.written.count) file(s) written" : "up to date")
                        + "\(rebuilt)\(pruned); \(report.originBytes) bytes in \(report.originRequests) request(s) from the origin")
            }
        }
    }
}

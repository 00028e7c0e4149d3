import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl push RELEASES s3://BUCKET/PREFIX`: upload a release folder to S3-compatible storage.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Upload a release folder to S3-compatible storage, safely beside other pushes.",
        discussion: """
            Uploads each channel of RELEASES (or those named with --channel) to \
            s3://BUCKET/PREFIX/CHANNEL/: archives and trust roots first, written only if \
            absent (Cache-Control: public, max-age=31536000, immutable); then index.json, \
            then manifest.json, each replaced only if unchanged since read \
            (Cache-Control: public, max-age=SECONDS). When another push changed them \
            meanwhile, both are read again, merged (no release is lost) and the version \
            rules checked again. Devices never see a manifest whose archive is missing.

            An archive the store holds with other bytes, or a version the store holds with \
            another archive, is refused (exit 65); a new version below the store's newest is \
            refused (exit 65). Pushing the same folder twice changes nothing.

            Both pointers are read back and compared with what was written before the push \
            reports them: a pointer write answered with anything but success, 412 or 409, \
            or one the store does not hold afterwards, fails the push (exit 73). What is \
            read from the store has a cap (manifest.json 64 KiB, index.json 16 MiB, a \
            listing page 8 MiB; over it: exit 65), and --keep refuses a listing that repeats \
            a continuation token or runs past 10,000 pages (exit 65; then nothing is pruned \
            and the release stays pushed).

            Credentials follow the AWS conventions: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY \
            and AWS_SESSION_TOKEN, else the AWS_PROFILE (default "default") profile of \
            ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE). Region: --region, AWS_REGION, \
            AWS_DEFAULT_REGION, else us-east-1. Endpoint: --endpoint, AWS_ENDPOINT_URL_S3, \
            AWS_ENDPOINT_URL (path-style addressing), else AWS itself.

            --keep N prunes while pushing: index.json keeps the newest N releases (and the \
            one manifest.json offers), then archives, patches, file lists and objects that \
            no kept release names are deleted, unless younger than --prune-grace (default \
            3600 s: another push may be uploading them for a release it has not indexed yet). \
            Prune the folder too (clientctl prune), or a later push re-adds what it holds.

            Examples:
              clientctl push releases s3://cdn-origin/notes
              clientctl push releases s3://cdn-origin/notes --keep 10
              clientctl push releases s3://releases/notes --channel stable \\
                  --endpoint http://127.0.0.1:8333 --region us-east-1 --max-age 30
            """
    )

    @Argument(help: ArgumentHelp("The release folder (written by publish).", valueName: "RELEASES"))
    var releases: String

    @Argument(help: ArgumentHelp("Where to: s3://BUCKET/PREFIX.", valueName: "S3-URL"))
    var destination: String

    @Option(name: .long, help: ArgumentHelp("A channel to push; repeat for several (default: every channel).", valueName: "NAME"))
    var channel: [String] = []

    @OptionGroup var store: S3StoreOptions

    @Option(name: .long, help: ArgumentHelp("Keep the newest N releases in index.json and delete what no kept release needs.", valueName: "N"))
    var keep: Int?

    @Option(
        name: .customLong("prune-grace"), help: ArgumentHelp("With --keep: never delete objects younger than this.", valueName: "SECONDS"))
    var pruneGrace = 3600

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let keep, !(1...100_000).contains(keep) { throw ValidationError("--keep must be 1 to 100000, not \(keep)") }
        guard (0...31_536_000).contains(pruneGrace) else { throw ValidationError("--prune-grace must be 0 to 31536000 seconds") }
    }

    func run() async throws {
        try await runReportingErrors {
            var push = try store.push(to: destination)
            push.keep = keep
            push.pruneGrace = TimeInterval(pruneGrace)
            let available = try ReleasePush.channels(in: releases)
            for name in channel where !available.contains(name) {
                throw CommandError(.notFound, "\(releases)/\(name) has no index.json: not a published channel")
            }
            var reports: [PushReport] = []
            for name in channel.isEmpty ? available : channel {
                let report = try await push.push(folder: releases, channel: name)
                reports.append(report)
                if !output.json { print(Self.summary(report, destination: destination)) }
            }
            if output.json {
                let value: [JSONValue] = reports.map { r in
                    .object([
                        "channel": .string(r.channel), "uploaded": .array(r.uploaded.map(JSONValue.string)),
                        "unchanged": .array(r.unchanged.map(JSONValue.string)), "added": .array(r.added.map { .string($0.description) }),
                        "updated": .array(r.updated.map { .string($0.description) }), "current": r.current.map { .string($0.description) } ?? .null,
                        "wroteIndex": .bool(r.wroteIndex), "wroteManifest": .bool(r.wroteManifest), "rounds": .integer(Int64(r.rounds)),
                        "removed": .array(r.removed.map { .string($0.description) }), "deleted": .array(r.deleted.map(JSONValue.string)),
                    ])
                }
                Console.out(Data(JSONPrettyPrinter.render(.object(["channels": .array(value)]))))
            }
        }
    }

    static func summary(_ r: PushReport, destination: String) -> String {
        let target = destination.hasSuffix("/") ? destination + r.channel : destination + "/" + r.channel
        var pruned = ""
        if !r.removed.isEmpty { pruned += "; removed from index.json: " + r.removed.map(\.description).joined(separator: ", ") }
        if !r.deleted.isEmpty { pruned += "; deleted \(r.deleted.count) object(s) no kept release needs" }
        guard r.wroteIndex || r.wroteManifest || !r.uploaded.isEmpty else {
            return "unchanged: \(target) already holds every release of this folder (current \(r.current?.description ?? "none"))" + pruned
        }
        var parts = ["pushed \(r.channel) to \(target): \(r.uploaded.count) object(s) uploaded, \(r.unchanged.count) already there"]
        if !r.added.isEmpty { parts.append("new: " + r.added.map(\.description).joined(separator: ", ")) }
        if !r.updated.isEmpty { parts.append("re-signed: " + r.updated.map(\.description).joined(separator: ", ")) }
        parts.append("current \(r.current?.description ?? "none")")
        if r.rounds > 1 { parts.append("merged with other pushes in \(r.rounds) rounds") }
        return parts.joined(separator: "; ") + pruned
    }
}

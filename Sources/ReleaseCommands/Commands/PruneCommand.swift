import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl prune CHANNEL --out RELEASES --keep N`: drop old releases from a channel folder.
struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Keep the newest N releases of a channel and delete the files no kept release needs.",
        discussion: """
            Under the channel's publishing lock: index.json keeps the newest N releases (and \
            the releases manifest.json names, always: its own, those beside it, those its \
            pins hold); it is rewritten first, then every \
            archive, delta patch, file list and file object that no kept release (and no \
            release waiting in pending/) names is deleted. Trust roots and files clientctl \
            did not write are never touched. Devices keep what they installed; a device on \
            a pruned release updates through the file list or the archive.

            For S3-compatible storage, push with --keep N (clientctl push --help).

            Examples:
              clientctl prune stable --out releases --keep 10
              clientctl prune stable --out releases --keep 3 --dry-run
            """
    )

    @Argument(help: ArgumentHelp("The release channel, e.g. stable.", valueName: "CHANNEL"))
    var channel: String

    @Option(name: .long, help: ArgumentHelp("Release folder root (as given to publish --out).", valueName: "RELEASES"))
    var out: String

    @Option(name: .long, help: ArgumentHelp("Releases to keep in index.json (1–100000).", valueName: "N"))
    var keep: Int

    @Flag(name: .customLong("dry-run"), help: "Print what would be removed; change nothing.")
    var dryRun = false

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (1...100_000).contains(keep) else { throw ValidationError("--keep must be 1 to 100000, not \(keep)") }
    }

    func run() async throws {
        try await runReportingErrors {
            let r = try await ChannelPrune.prune(releases: out, channel: channel, keep: keep, dryRun: dryRun)
            if output.json {
                let value: JSONValue = .object([
                    "channel": .string(r.channel), "dryRun": .bool(dryRun),
                    "removed": .array(r.removedReleases.map { .string($0.description) }),
                    "deleted": .array(r.deleted.map(JSONValue.string)), "deletedBytes": .integer(r.deletedBytes), "kept": .integer(Int64(r.kept)),
                ])
                Console.out(Data(JSONPrettyPrinter.render(value)))
                return
            }
            let verb = dryRun ? "would remove" : "removed"
            let releases = r.removedReleases.isEmpty ? "no release" : r.removedReleases.map(\.description).joined(separator: ", ")
            print(
                "\(r.channel): \(verb) \(releases) from index.json; \(dryRun ? "would delete" : "deleted") \(r.deleted.count) file(s), "
                    + "\(r.deletedBytes) bytes; \(r.kept) file(s) still needed")
        }
    }
}

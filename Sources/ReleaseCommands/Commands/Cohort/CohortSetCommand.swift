import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import ReleaseSigning
import SignedManifest

/// `clientctl cohort set CHANNEL NAME --ids FILE --out RELEASES --key K`.
struct CohortSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Write a cohort's device ids and re-sign the release that names it.",
        discussion: """
            Reads FILE (or stdin for -): one device id per line (32 lowercase hex digits, \
            as `clientctl status` shows it), blank lines and # comments allowed, at most \
            100000 ids. Writes the sorted list to OUT/CHANNEL/cohorts/NAME.txt and the copy \
            devices read to OUT/CHANNEL/cohorts/NAME/<sha256>.txt. When the channel's \
            current manifest names the cohort, it is re-signed to name the new list (like \
            `rollout set`); otherwise the next publish or rollout edit names it.

            A line that is not a device id is refused with its number (its text shown with \
            control characters escaped), exit 64, and nothing is written; a re-signing that \
            fails puts the list back as it was. When the channel's restriction.json halts its release (a pause, a \
            target narrowed by `rollout guard --label`), re-signing the manifest would lift \
            that halt: the command refuses it, exit 77, unless --lift-halt says so.

            Examples:
              clientctl cohort set stable pilot --ids pilot-ids.txt \\
                --out releases --key k.pem
              # the guard halted the release for a store: lift that halt on purpose
              clientctl cohort set stable pilot --ids pilot-ids.txt \\
                --out releases --key k.pem --lift-halt
            """
    )

    @Argument(help: ArgumentHelp("The release channel, e.g. stable.", valueName: "CHANNEL"))
    var channel: String

    @Argument(help: ArgumentHelp("The cohort's name, as `id in cohort NAME` writes it.", valueName: "NAME"))
    var name: String

    @Option(name: .long, help: ArgumentHelp("The device ids, one per line; - reads stdin.", valueName: "FILE"))
    var ids: String

    @Option(name: .long, help: ArgumentHelp("Release folder root (as given to publish --out).", valueName: "RELEASES"))
    var out: String

    @OptionGroup var signing: SigningOptions

    @OptionGroup var acts: EditFlagOptions

    @OptionGroup var audit: AuditOptions

    func run() async throws {
        try await runReportingErrors {
            let signers = try signing.signers()
            let target = { "\(ChannelAuditState(releases: out, channel: channel).target(channel)) cohort \(name)" }
            try await audit.recording("cohort-set", target: target(), signer: signers[0], state: auditState) {
                try await set(signers: signers)
            }
        }
    }

    /// Writes the list and re-signs the release that names it.
    private func set(signers: [any DocumentSigner]) async throws {
        let text = try Self.read(ids)
        // A halt of the release this list would re-sign, or a key that cannot be read, is
        // refused before the list is written.
        try ChannelEditor.requireNoHalt(releases: out, channel: channel, flags: acts.flags, act: "cohort set", naming: name)
        let before = ListFiles(releases: out, channel: channel, name: name)
        let outcome = try ChannelCohorts.set(name, ids: text, source: ids == "-" ? "stdin" : ids, releases: out, channel: channel)
        let cohort = outcome.cohort
        guard outcome.currentNamesOther else {
            print("cohort \(cohort.name) of \(channel): \(cohort.count) device\(cohort.count == 1 ? "" : "s"), sha256 \(cohort.digest)")
            return
        }
        let manifest: Manifest
        do {
            manifest = try await ChannelEditor.apply(.refreshCohorts, releases: out, channel: channel, signers: signers, flags: acts.flags)
        } catch {
            // The re-signing failed: the channel's list is what the manifest names again.
            before.restore()
            throw error
        }
        print("cohort \(cohort.name) of \(channel): \(cohort.count) device\(cohort.count == 1 ? "" : "s"), sha256 \(cohort.digest)")
        print("\(manifest.app) \(manifest.version) on \(manifest.channel): re-signed to name it")
    }

    /// The audit trail's state: the channel's, and the cohort list's length.
    private func auditState() -> String {
        let list = (try? BoundedFile.read(out + "/" + channel + "/cohorts/" + name + ".txt", cap: 8 << 20, code: CommandError.Code.io)) ?? nil
        let count = list.map { String(decoding: $0, as: UTF8.self).split(separator: "\n").count { !$0.isEmpty && !$0.hasPrefix("#") } }
        return ChannelAuditState(releases: out, channel: channel).text + (count.map { ", cohort \(name) \($0) ids" } ?? ", no cohort \(name)")
    }

    /// The text of `path` (`-`: stdin), at most 8 MiB.
    static func read(_ path: String) throws -> String {
        let limit = 8 << 20
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readData(ofLength: limit + 1)
        } else {
            guard let read = try BoundedFile.read(path, cap: limit + 1, code: CommandError.Code.io, tooLarge: CommandError.Code.tooLarge) else {
                throw CommandError(.notFound, "\(path) does not exist: the device ids of the cohort, one per line")
            }
            data = read
        }
        guard data.count <= limit else { throw CommandError(.tooLarge, "\(path) is larger than 8 MiB: not a list of device ids") }
        guard let text = String(data: data, encoding: .utf8) else { throw CommandError(.invalidArgument, "\(path) is not UTF-8 text") }
        return text
    }
}

/// A cohort's files in a channel folder before `cohort set` writes them: the list
/// (`cohorts/NAME.txt`) and the device copies (`cohorts/NAME/<sha256>.txt`), so that a set
/// whose re-signing fails puts them back as they were.
private struct ListFiles {
    let list: String
    let copies: String
    let bytes: Data?
    let copiesBefore: Set<String>?

    init(releases: String, channel: String, name: String) {
        list = releases + "/" + channel + "/cohorts/" + name + ".txt"
        copies = releases + "/" + channel + "/cohorts/" + name
        bytes = FileManager.default.contents(atPath: list)
        copiesBefore = (try? FileManager.default.contentsOfDirectory(atPath: copies)).map(Set.init)
    }

    /// The list as it was (or none), and no copy the set added. Best effort: the failure
    /// that asked for it is what the command reports.
    func restore() {
        if let bytes {
            try? AtomicFile.write(bytes, to: list)
        } else {
            unlink(list)
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: copies)) ?? [] where copiesBefore?.contains(name) != true {
            unlink(copies + "/" + name)
        }
        if copiesBefore == nil { rmdir(copies) }
    }
}

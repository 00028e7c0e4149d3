import ArgumentParser
import CommandSupport
import ReleaseSigning
import SignedManifest

/// `clientctl root set-choosable FILE [CHANNEL…]`.
struct RootSetChoosableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-choosable",
        abstract: "Set the other channels the root's devices may choose to follow (drops the root's signatures).",
        discussion: """
            A device of the root follows the root's own channel unless its owner (or its page, \
            for testers) chooses one of these with 'clientctl channel set' \
            (docs/targeting.md#choosing-a-channel); manifests of a chosen channel are verified \
            with this root, like its own. No CHANNEL: the devices follow only the root's own \
            channel again (a device that chose another goes back at its next check).

            Examples:
              clientctl root set-choosable root-2.json beta nightly
              clientctl root set-choosable root-2.json
            """
    )

    @Argument(help: ArgumentHelp("The root file.", valueName: "FILE")) var file: String
    @Argument(help: ArgumentHelp("Channels its devices may choose besides the root's own.", valueName: "CHANNEL"))
    var channels: [String] = []

    func run() async throws {
        try await runReportingErrors {
            var draft = try RootFile.read(file)
            try draft.setChoosable(channels)
            let list = draft.choosable.isEmpty ? "none" : draft.choosable.joined(separator: ", ")
            try RootFile.write(draft, to: file, note: "choosable channels: \(list) (signatures dropped)")
        }
    }
}

import ArgumentParser
import CommandSupport
import ReleaseSigning
import SignedManifest

/// `clientctl root set-threshold FILE --role R N`.
struct RootSetThresholdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-threshold",
        abstract: "Set how many keys of a role must sign (drops the root's signatures).",
        discussion: """
            Examples:
              clientctl root set-threshold root-2.json --role release 2
            """
    )

    @Argument(help: ArgumentHelp("The root file.", valueName: "FILE")) var file: String
    @Option(help: ArgumentHelp("The role to change.", valueName: "root|release|rollout")) var role: RootDraft.Role
    @Argument(help: ArgumentHelp("Distinct keys that must sign (1 to the role's keys).", valueName: "N")) var threshold: Int

    func run() async throws {
        try await runReportingErrors {
            var draft = try RootFile.read(file)
            try draft.setThreshold(threshold, for: role)
            try RootFile.write(draft, to: file, note: "\(role.rawValue) threshold \(threshold) (signatures dropped)")
        }
    }
}

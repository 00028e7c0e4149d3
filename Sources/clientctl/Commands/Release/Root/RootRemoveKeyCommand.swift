import ArgumentParser
import SignedManifest

/// `clientctl root remove-key FILE --role R --key-id ID`.
struct RootRemoveKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove-key",
        abstract: "Remove a key from a role of a root (a compromised key; drops its signatures).",
        discussion: """
            Examples:
              clientctl root remove-key root-2.json --role release --key-id 1f2e3d4c5b6a7988
            """
    )

    @Argument(help: ArgumentHelp("The root file.", valueName: "FILE")) var file: String
    @Option(help: "root or release.") var role: RootDraft.Role
    @Option(name: .customLong("key-id"), help: "The key id (16 hex, as `clientctl keygen` prints it).") var keyId: String

    func run() async throws {
        try await runReportingErrors {
            var draft = try RootFile.read(file)
            try draft.removeKey(keyId, from: role)
            try RootFile.write(draft, to: file, note: "removed \(keyId) from the \(role.rawValue) role (signatures dropped)")
        }
    }
}

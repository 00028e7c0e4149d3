import ArgumentParser
import CommandSupport
import ReleaseSigning
import SignedManifest

/// `clientctl root add-key FILE --role R --key PUB.pem`.
struct RootAddKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-key",
        abstract: "Add a public key to a role of a root (drops its signatures).",
        discussion: """
            Examples:
              clientctl root add-key root-2.json --role release --key r3.pub.pem
            """
    )

    @Argument(help: ArgumentHelp("The root file.", valueName: "FILE")) var file: String
    @Option(help: ArgumentHelp("The role to change.", valueName: "root|release|rollout")) var role: RootDraft.Role
    @Option(help: ArgumentHelp("The public key to add.", valueName: "PUB.pem")) var key: String

    func run() async throws {
        try await runReportingErrors {
            var draft = try RootFile.read(file)
            let added = try Ed25519.PublicKey(pemFile: key)
            draft.addKey(added, to: role)
            try RootFile.write(draft, to: file, note: "added \(added.keyId) to the \(role.rawValue) role (signatures dropped)")
        }
    }
}

import ArgumentParser
import CommandSupport
import ReleaseSigning
import SignedManifest

/// `clientctl root remove-key FILE --role R (--key PUB.pem | --key-id ID)`.
struct RootRemoveKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove-key",
        abstract: "Remove a key from a role of a root (a compromised key; drops its signatures).",
        discussion: """
            A role keeps at least its threshold of keys: add the replacement first (or lower
            the threshold), then remove.

            Examples:
              clientctl root add-key root-2.json --role release --key r3.pub.pem
              clientctl root remove-key root-2.json --role release --key r1.pub.pem
            """
    )

    @Argument(help: ArgumentHelp("The root file.", valueName: "FILE")) var file: String
    @Option(help: ArgumentHelp("The role to change.", valueName: "root|release|rollout")) var role: RootDraft.Role
    @Option(help: ArgumentHelp("The public key to remove.", valueName: "PUB.pem")) var key: String?
    @Option(name: .customLong("key-id"), help: ArgumentHelp("Or its key id (16 hex, as `clientctl keygen` prints it).", valueName: "ID"))
    var keyId: String?

    func validate() throws {
        guard (key == nil) != (keyId == nil) else {
            throw ValidationError("give the key to remove as --key PUB.pem or --key-id ID (one of them)")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            var draft = try RootFile.read(file)
            let keyId = try key.map { try Ed25519.PublicKey(pemFile: $0).keyId } ?? self.keyId ?? ""
            try draft.removeKey(keyId, from: role)
            try RootFile.write(draft, to: file, note: "removed \(keyId) from the \(role.rawValue) role (signatures dropped)")
        }
    }
}

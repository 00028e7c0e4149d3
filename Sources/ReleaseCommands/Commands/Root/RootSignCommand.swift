import ArgumentParser
import CommandSupport
import SignedManifest

/// `clientctl root sign FILE --key K`.
struct RootSignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Add signatures to a root (its own root keys, and for N+1 those of root N).",
        discussion: """
            Root N+1 needs a threshold of root N's root keys and of its own: sign with both.
            With --sign-command each --key is a public key and CMD signs its stdin (see
            clientctl sign --help).

            Examples:
              clientctl root sign root-2.json --key a.pem
              clientctl root sign root-2.json --key b.pub.pem --sign-command \\
                'openssl pkeyutl -sign -rawin -inkey b.pem -in /dev/stdin'
            """
    )

    @Argument(help: ArgumentHelp("The root file.", valueName: "FILE")) var file: String
    @OptionGroup var signing: SigningOptions

    func run() async throws {
        try await runReportingErrors {
            var draft = try RootFile.read(file)
            let before = draft.signatures.count
            for signer in try signing.signers() { try await draft.sign(with: signer) }
            let added = draft.signatures.count - before
            try RootFile.write(draft, to: file, note: added == 0 ? "no new signature (these keys signed already)" : "\(added) new signature(s)")
        }
    }
}

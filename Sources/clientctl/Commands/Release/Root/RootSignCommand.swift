import ArgumentParser
import SignedManifest

/// `clientctl root sign FILE --key K`.
struct RootSignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Add signatures to a root (its own root keys, and for N+1 those of root N).",
        discussion: """
            Examples:
              clientctl root sign root-2.json --key old-root-a.pem --key new-root-c.pem
              clientctl root sign root-2.json --key a.pub.pem \\
                --sign-command 'openssl pkeyutl -sign -rawin -inkey /media/a.pem -in /dev/stdin'
            """
    )

    @Argument(help: ArgumentHelp("The root file.", valueName: "FILE")) var file: String
    @OptionGroup var signing: SigningOptions

    func run() async throws {
        try await runReportingErrors {
            var draft = try RootFile.read(file)
            let signers = try signing.signers()
            for signer in signers { try draft.sign(with: signer) }
            try RootFile.write(draft, to: file, note: "signed by \(signers.map(\.publicKey.keyId).joined(separator: ", "))")
        }
    }
}

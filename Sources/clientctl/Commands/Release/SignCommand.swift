import ArchivePublishing
import ArgumentParser
import Foundation
import SignedManifest

/// `clientctl sign MANIFEST --key K`: adds signatures to a manifest.
struct SignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Add release signatures to a manifest; publish a pending release once enough signed.",
        discussion: """
            A channel whose trust root asks for several release keys keeps a release in
            OUT/CHANNEL/pending/vX.Y.Z.json until that many distinct release keys signed it
            (devices never see it before). Each key holder adds a signature with this
            command; the one that meets the threshold publishes the release (index.json,
            then manifest.json). Any other manifest file gets the signatures added in place.

            Examples:
              clientctl sign releases/stable/pending/v1.5.0.json --key release-2.pem
              clientctl sign releases/stable/pending/v1.5.0.json \\
                --key release-2.pub.pem --sign-command 'yubihsm-sign --raw'
            """
    )

    @Argument(help: ArgumentHelp("The manifest to sign.", valueName: "MANIFEST"))
    var manifest: String

    @OptionGroup var signing: SigningOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let outcome = try PendingRelease.sign(manifest, signers: try signing.signers())
            let m = outcome.manifest
            if output.json {
                let o: JSONObject = [
                    "version": .string(m.version.description), "published": .bool(outcome.published), "path": .string(outcome.path),
                    "missingSignatures": .integer(Int64(outcome.missing)), "keyIds": .array(m.signatures.map { .string($0.keyId) }),
                ]
                Console.out(Data(JSONPrettyPrinter.render(.object(o))))
            } else if outcome.published {
                print("published \(m.app) \(m.version) on \(m.channel): the release threshold is met (\(outcome.path))")
            } else if outcome.missing > 0 {
                print("signed \(outcome.path): \(outcome.missing) more release signature(s) needed before it is published")
            } else {
                print("signed \(outcome.path) (keys: \(m.signatures.map(\.keyId).joined(separator: ", ")))")
            }
        }
    }
}

import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

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

            --sign-command CMD (every signing command takes it): each --key is then a
            public key, and CMD runs under /bin/sh -c with the bytes to sign as its stdin,
            a private regular file whose path is also in CLIENTCTL_SIGN_INPUT, and
            CLIENTCTL_SIGN_KEY_ID and CLIENTCTL_SIGN_PUBLIC_KEY naming the key. CMD writes
            the raw 64-byte signature on stdout. A CMD that fails or runs over
            --sign-timeout is killed with its children (exit 69); output that is not a
            valid signature of that key is refused (exit 65).

            The examples sign for a channel whose root asks for release keys r1, r2, r3.

            Examples:
              clientctl sign releases/stable/pending/v1.5.0.json --key r2.pem
              clientctl sign releases/stable/pending/v1.5.0.json --key r3.pub.pem \\
                --sign-timeout 60 --sign-command \\
                'openssl pkeyutl -sign -rawin -inkey r3.pem -in /dev/stdin'
            """
    )

    @Argument(help: ArgumentHelp("The manifest to sign.", valueName: "MANIFEST"))
    var manifest: String

    @OptionGroup var signing: SigningOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let outcome = try await PendingRelease.sign(manifest, signers: try signing.signers())
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
                print("signed \(outcome.path): \(SigningOptions.signedBy(m.signatures))")
            }
        }
    }
}

import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// `clientctl keygen --out PREFIX`: a new Ed25519 signing key pair.
struct KeygenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Create an Ed25519 signing key pair for publishing releases.",
        discussion: """
            Writes PREFIX.pem (private key, PKCS#8 PEM, mode 0600) and PREFIX.pub.pem (public key, \
            SubjectPublicKeyInfo PEM) and prints the keyId (first 16 hex characters of SHA-256 \
            over the DER public key) on stdout. Never overwrites an existing file (exit 73). \
            The files are the ones `openssl genpkey -algorithm ed25519` makes; keep the private \
            key offline and give devices the .pub.pem file.

            Examples:
              clientctl keygen --out keys/release-2026
              clientctl keygen --out keys/release-2026 --json
            """
    )

    @Option(name: .long, help: ArgumentHelp("Path prefix of the two key files.", valueName: "PREFIX"))
    var out: String

    @OptionGroup var output: OutputOptions

    func validate() throws {
        // `--out ""` or `--out keys/` would write `.pem` and `.pub.pem`: hidden files with no name.
        guard let name = out.split(separator: "/", omittingEmptySubsequences: false).last, !name.isEmpty else {
            throw ValidationError(
                "--out '\(out)' names no file: give a path prefix such as keys/release (writes keys/release.pem and keys/release.pub.pem)")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let publicKey = try KeyFiles.generate(prefix: out)
            let paths = KeyFiles.paths(prefix: out)
            if output.json {
                let o: JSONObject = [
                    "keyId": .string(publicKey.keyId), "privateKey": .string(paths.privateKey),
                    "publicKey": .string(paths.publicKey),
                ]
                Console.out(Data(JSONPrettyPrinter.render(.object(o))))
            } else {
                print(publicKey.keyId)
                printError("wrote \(paths.privateKey) (private: keep it secret) and \(paths.publicKey) (public: give it to devices)")
            }
        }
    }
}

import ArgumentParser
import Foundation
import SignedManifest

/// `--key` (repeatable) and `--sign-command`: who signs. Without `--sign-command` each
/// `--key` is a private key file; with it each `--key` is the PUBLIC key of a key that
/// stays in an HSM, a cloud KMS or a YubiKey, and CMD signs for it (canonical bytes on
/// its stdin, the raw 64-byte signature on its stdout).
struct SigningOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Ed25519 private key (PKCS#8 PEM), or with --sign-command its public key; repeat for a threshold.", valueName: "KEY.pem"))
    var key: [String] = []

    @Option(
        name: .customLong("sign-command"),
        help: ArgumentHelp("Command that signs stdin with the --key's private key and writes the raw signature.", valueName: "CMD"))
    var signCommand: String?

    func validate() throws {
        guard !key.isEmpty else { throw ValidationError("Missing expected argument '--key <KEY.pem>'") }
    }

    /// The signers, in the order given.
    func signers() throws -> [any DocumentSigner] {
        try key.map { path -> any DocumentSigner in
            guard let signCommand else { return try Ed25519.PrivateKey(pemFile: path) }
            return CommandSigner(command: signCommand, publicKey: try Ed25519.PublicKey(pemFile: path))
        }
    }
}

import ArgumentParser
import CommandSupport
import Foundation
import ReleaseSigning
import SignedManifest

/// `--key` (repeatable), `--sign-command` and `--sign-timeout`: who signs. Without
/// `--sign-command` each `--key` is a private key file; with it each `--key` is the PUBLIC
/// key of a key that stays in an HSM, a cloud KMS or a YubiKey, and CMD signs for it (see
/// ``CommandSigner``: the canonical bytes as its stdin, a regular file also named by
/// `CLIENTCTL_SIGN_INPUT`; the raw 64-byte signature on its stdout).
struct SigningOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Ed25519 private key (PKCS#8 PEM), or with --sign-command its public key; repeat for a threshold.", valueName: "KEY.pem"))
    var key: [String] = []

    @Option(
        name: .customLong("sign-command"),
        help: ArgumentHelp(
            "Command that signs its stdin (a file, also $CLIENTCTL_SIGN_INPUT) with the --key's private key and writes the raw signature.",
            valueName: "CMD"))
    var signCommand: String?

    @Option(
        name: .customLong("sign-timeout"),
        help: ArgumentHelp(
            "Seconds --sign-command may run for each signature before it and its children are killed (exit 69).",
            valueName: "SECONDS"))
    var signTimeout: Double = 120

    func validate() throws {
        guard !key.isEmpty else { throw ValidationError("Missing expected argument '--key <KEY.pem>'") }
        guard signTimeout.isFinite, signTimeout > 0, signTimeout <= 86_400 else {
            throw ValidationError("--sign-timeout must be more than 0 and at most 86400 seconds, not \(signTimeout)")
        }
    }

    /// The signers, in the order given.
    func signers() throws -> [any DocumentSigner] {
        let timeout = Duration.milliseconds(Int64((signTimeout * 1000).rounded(.up)))
        return try key.map { path -> any DocumentSigner in
            guard let signCommand else { return try Ed25519.PrivateKey(pemFile: path) }
            return CommandSigner(command: signCommand, publicKey: try Ed25519.PublicKey(pemFile: path), timeout: timeout)
        }
    }

    /// "signed by key A" or "signed by keys A, B": every signer once, in order.
    static func signedBy(_ signatures: [DocumentSignature]) -> String {
        var seen: Set<String> = []
        let ids = signatures.map(\.keyId).filter { seen.insert($0).inserted }
        return "signed by \(ids.count == 1 ? "key" : "keys") \(ids.joined(separator: ", "))"
    }
}

import ClientFoundation
import Foundation
import SignedManifest

/// `--sign-command CMD`: a command signs for a key that stays where CMD keeps it (an HSM,
/// a cloud KMS, a YubiKey).
///
/// CMD runs under `/bin/sh -c` in a process group of its own. Its standard input is a
/// private regular file holding the canonical bytes (mode 0600 in a 0700 folder, removed
/// afterwards), so one-shot signers such as `openssl pkeyutl -rawin -in /dev/stdin` see a
/// file of known size; the same path is in `CLIENTCTL_SIGN_INPUT`. `CLIENTCTL_SIGN_KEY_ID`
/// (the key id) and `CLIENTCTL_SIGN_PUBLIC_KEY` (its PEM) name the key, so one command can
/// serve several keys. CMD writes the raw 64-byte signature on standard output.
///
/// Limits: standard output goes to a file in the private folder that is watched while CMD
/// runs, standard error to an unlinked temporary file; at most ``outputCap`` bytes of each
/// are kept (more on standard output is not a signature, and the group is ended within
/// about 10 ms); CMD and everything it started are killed (`SIGKILL` to
/// the group) when it runs longer than ``timeout``. A command that fails or runs over is
/// ``ReleaseSigningErrorCode/signerUnavailable`` (exit 69); output that is not a valid
/// signature of ``publicKey`` is `.invalidSignature` (exit 65).
public struct CommandSigner: DocumentSigner, Sendable {
    /// The shell command.
    public let command: String
    public let publicKey: Ed25519.PublicKey
    /// The longest CMD may run before its process group is killed.
    public let timeout: Duration

    /// Two minutes: time for a person to find and touch a token.
    public static let defaultTimeout: Duration = .seconds(120)
    /// Most bytes kept from the command's standard output and from its standard error (a
    /// signature is 64 bytes).
    public static let outputCap = 4096

    /// Creates a signer that runs `command` for `publicKey`, for at most `timeout`.
    public init(command: String, publicKey: Ed25519.PublicKey, timeout: Duration = CommandSigner.defaultTimeout) {
        self.command = command
        self.publicKey = publicKey
        self.timeout = timeout
    }

    public func sign(_ message: [UInt8]) async throws -> [UInt8] {
        let input = try SignInputFile(message)
        defer { input.remove() }
        let outcome = try await SignCommandRun(command: command, timeout: timeout).run(
            input: input,
            environment: [
                "CLIENTCTL_SIGN_KEY_ID": publicKey.keyId,
                "CLIENTCTL_SIGN_PUBLIC_KEY": publicKey.pemRepresentation,
                "CLIENTCTL_SIGN_INPUT": input.path,
            ])
        return try signature(from: outcome, for: message)
    }

    /// The signature in `outcome`, or the error that says why there is none.
    func signature(from outcome: SignCommandRun.Outcome, for message: [UInt8]) throws -> [UInt8] {
        let name = "sign command '\(command)' for key \(publicKey.keyId)"
        let said = outcome.errorText.isEmpty ? "" : ": \(outcome.errorText)"
        if outcome.outputOverflowed, outcome.ending != .timedOut {
            // The group was killed for it: whatever its status, this is what went wrong.
            throw ReleaseSigningError(
                .invalidSignature,
                "\(name) wrote more than \(Self.outputCap) bytes: not a signature (a raw Ed25519 signature is \(Ed25519.signatureLength))")
        }
        switch outcome.ending {
        case .timedOut:
            throw ReleaseSigningError(
                .signerUnavailable,
                "\(name) did not finish within \(Self.seconds(timeout)) s and was killed with its process group (--sign-timeout)\(said)")
        case .signal(let number):
            throw ReleaseSigningError(.signerUnavailable, "\(name) was killed by signal \(number)\(said)")
        case .exited(let status) where status != 0:
            throw ReleaseSigningError(.signerUnavailable, "\(name) failed (status \(status))\(said)")
        case .exited:
            break
        }
        guard outcome.output.count == Ed25519.signatureLength else {
            throw ReleaseSigningError(
                .invalidSignature,
                "\(name) wrote \(outcome.output.count) bytes; a raw Ed25519 signature is \(Ed25519.signatureLength)\(said)")
        }
        guard publicKey.isValidSignature(outcome.output, for: message) else {
            throw ReleaseSigningError(.invalidSignature, "\(name) made a signature that does not verify with that key (another key?)")
        }
        return outcome.output
    }

    /// `duration` in whole seconds, or with a fraction when it has one.
    static func seconds(_ duration: Duration) -> String {
        let (whole, attoseconds) = duration.components
        if attoseconds == 0 { return "\(whole)" }
        return String(format: "%.3g", duration.inSeconds)
    }
}

import ClientUpdater
import Foundation

/// Something that signs canonical bytes with an Ed25519 key: a private key file, or a
/// command in front of a key that never leaves its HSM, cloud KMS or YubiKey.
public protocol DocumentSigner {
    /// The key whose signatures this signer makes (its id names the signature).
    var publicKey: Ed25519.PublicKey { get }
    /// The 64-byte Ed25519 signature of `message`.
    func sign(_ message: [UInt8]) throws -> [UInt8]
}

extension Ed25519.PrivateKey: DocumentSigner {
    public func sign(_ message: [UInt8]) throws -> [UInt8] { try signature(for: message) }
}

/// `--sign-command CMD`: clientctl writes the canonical bytes to CMD's standard input and
/// reads the raw 64-byte Ed25519 signature from its standard output; the key stays where
/// CMD keeps it. CMD runs with `/bin/sh -c`, with `CLIENTCTL_SIGN_KEY_ID` (the key id) and
/// `CLIENTCTL_SIGN_PUBLIC_KEY` (its PEM) in the environment, so one command can serve
/// several keys. Every signature is verified with ``publicKey`` before it is used.
public struct CommandSigner: DocumentSigner {
    /// The shell command.
    public let command: String
    public let publicKey: Ed25519.PublicKey

    public init(command: String, publicKey: Ed25519.PublicKey) {
        self.command = command
        self.publicKey = publicKey
    }

    /// Most bytes read from the command's output (a signature is 64).
    static let outputCap = 4096

    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["CLIENTCTL_SIGN_KEY_ID"] = publicKey.keyId
        environment["CLIENTCTL_SIGN_PUBLIC_KEY"] = publicKey.pemRepresentation
        process.environment = environment
        // A command that exits without reading its input must not kill us with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw SignedArchiveError(.crypto, "sign command '\(command)' cannot be started: \(error)")
        }
        // Feed standard input beside reading standard output: neither pipe can fill up.
        let writer = Thread {
            try? input.fileHandleForWriting.write(contentsOf: Data(message))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        var signature = Data()
        while let chunk = try? output.fileHandleForReading.read(upToCount: 4096), !chunk.isEmpty {
            signature.append(chunk)
            if signature.count > Self.outputCap { break }
        }
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw SignedArchiveError(.crypto, "sign command '\(command)' failed (status \(process.terminationStatus)) for key \(publicKey.keyId)")
        }
        guard signature.count == Ed25519.signatureLength else {
            throw SignedArchiveError(
                .crypto,
                "sign command '\(command)' wrote \(signature.count) bytes for key \(publicKey.keyId); a raw Ed25519 signature is \(Ed25519.signatureLength)"
            )
        }
        let bytes = Array(signature)
        guard publicKey.isValidSignature(bytes, for: message) else {
            throw SignedArchiveError(
                .invalidSignature, "sign command '\(command)' made a signature that does not verify with key \(publicKey.keyId) (another key?)")
        }
        return bytes
    }
}

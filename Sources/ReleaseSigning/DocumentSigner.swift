import ClientFoundation
import Foundation
import SignedManifest

/// Something that signs canonical bytes with an Ed25519 key: a private key file, or a
/// command in front of a key that never leaves its HSM, cloud KMS or YubiKey
/// (``CommandSigner``). Signing is asynchronous because a command may wait for a person
/// to touch a token.
public protocol DocumentSigner {
    /// The key whose signatures this signer makes (its id names the signature).
    var publicKey: Ed25519.PublicKey { get }
    /// The 64-byte Ed25519 signature of `message`.
    func sign(_ message: [UInt8]) async throws -> [UInt8]
}

extension Ed25519.PrivateKey: DocumentSigner {
    public func sign(_ message: [UInt8]) async throws -> [UInt8] { try signature(for: message) }
}

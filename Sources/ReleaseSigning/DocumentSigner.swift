import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

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

/// Signing a JSON document whose signatures cover the RFC 8785 bytes of the object without
/// `signatures` (restrictions, media indexes).
enum SignedObject {
    /// `unsigned` with a `signatures` array: one signature by each of `signers`, a key
    /// that appears twice signing once.
    static func sign(_ unsigned: JSONObject, by signers: [any DocumentSigner]) async throws -> JSONObject {
        let message = CanonicalJSON.serialize(unsigned)
        var seen = Set<String>()
        var signatures: [DocumentSignature] = []
        for signer in signers where seen.insert(signer.publicKey.keyId).inserted {
            signatures.append(DocumentSignature(keyId: signer.publicKey.keyId, signature: try await signer.sign(message)))
        }
        var o = unsigned
        o["signatures"] = .array(signatures.map(\.jsonValue))
        return o
    }
}

internal import COpenSSL

/// An OpenSSL Ed25519 public key made once and kept for the life of an
/// ``Ed25519/PublicKey``, so a verification does not build an `EVP_PKEY` again (each build
/// takes OpenSSL's provider locks).
///
/// `@unchecked Sendable`: the `EVP_PKEY` holds a public key only and is never changed after
/// it is made (nothing here sets a parameter on it); OpenSSL 3 lets such a key be used by
/// several threads at once for verification, each with its own `EVP_MD_CTX`, and guards
/// its internal caches with the key's own lock. It is freed when the last reference goes.
final class VerifyingKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// A public-only key from the 32 raw bytes; nil when OpenSSL refuses them.
    init?(raw: [UInt8]) {
        guard raw.count == Ed25519.publicKeyLength,
            let p = raw.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) })
        else { return nil }
        pointer = p
    }

    /// Another reference to `pointer`, a key that holds a public key only.
    init?(sharing pointer: OpaquePointer) {
        guard EVP_PKEY_up_ref(pointer) == 1 else { return nil }
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// True when `signature` is a valid Ed25519 signature of `message` by this key. Any
    /// failure is `false`: verification fails closed.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == Ed25519.signatureLength else { return false }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, nil, nil, pointer) == 1 else { return false }
        let result = signature.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(ctx, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        return result == 1
    }
}

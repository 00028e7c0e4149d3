internal import COpenSSL

/// The hash of Roughtime version 1: SHA-512 truncated to its first 32 bytes (RFC 10049 §5.3),
/// for the Merkle tree and the `SRV` tag.
enum RoughtimeHash {
    static let length = 32

    /// The first 32 bytes of SHA-512 over the concatenation of `parts`.
    static func hash(_ parts: [UInt8]...) -> [UInt8] {
        // EVP_MD_CTX_new only fails when memory is exhausted; trap then, as Swift does.
        guard let ctx = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed: out of memory") }
        defer { EVP_MD_CTX_free(ctx) }
        precondition(EVP_DigestInit_ex(ctx, EVP_sha512(), nil) == 1, "EVP_DigestInit_ex(SHA-512) failed")
        for part in parts {
            part.withUnsafeBytes { buffer in _ = EVP_DigestUpdate(ctx, buffer.baseAddress, buffer.count) }
        }
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var size: UInt32 = 0
        EVP_DigestFinal_ex(ctx, &out, &size)
        return Array(out.prefix(length))
    }
}

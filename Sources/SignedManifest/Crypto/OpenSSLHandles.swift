internal import COpenSSL

/// Owns an `EVP_PKEY` for the length of one operation; freed when it goes out of scope.
struct PKeyHandle: ~Copyable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }
}

/// Owns a memory `BIO`; freed when it goes out of scope.
struct MemoryBIO: ~Copyable {
    let pointer: OpaquePointer

    /// An empty writable memory BIO.
    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLErrorQueue.error(.crypto, "cannot allocate an OpenSSL BIO") }
        pointer = bio
    }

    deinit { BIO_free(pointer) }

    /// Everything written into the BIO so far.
    func contents() -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(pointer))
        guard pending > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: pending)
        let n = BIO_read(pointer, &out, Int32(pending))
        return Array(out.prefix(max(0, Int(n))))
    }

    /// Writes bytes into the BIO.
    func write(_ bytes: [UInt8]) throws {
        let n = bytes.withUnsafeBytes { BIO_write(pointer, $0.baseAddress, Int32($0.count)) }
        guard n == bytes.count else { throw OpenSSLErrorQueue.error(.crypto, "cannot fill an OpenSSL BIO") }
    }
}

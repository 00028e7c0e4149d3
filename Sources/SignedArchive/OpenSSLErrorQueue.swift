internal import COpenSSL

/// OpenSSL's thread-local error queue, turned into readable text.
///
/// Call ``clear()`` before a sequence of OpenSSL calls and ``drain()`` right after one
/// fails, in the same synchronous call (the queue belongs to the current thread).
enum OpenSSLErrorQueue {
    /// Forgets errors left by earlier calls.
    static func clear() { ERR_clear_error() }

    /// Empties the queue and returns its entries joined by `; `, or `no OpenSSL error detail`.
    static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "no OpenSSL error detail" : messages.joined(separator: "; ")
    }

    /// A `SignedArchiveError` carrying `what` and the drained queue.
    static func error(_ code: SignedArchiveError.Code, _ what: String) -> SignedArchiveError {
        SignedArchiveError(code, "\(what) (OpenSSL: \(drain()))")
    }
}

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

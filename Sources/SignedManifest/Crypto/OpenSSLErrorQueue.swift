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

    /// A `SignedManifestError` carrying `what` and the drained queue.
    static func error(_ code: SignedManifestError.Code, _ what: String) -> SignedManifestError {
        SignedManifestError(code, "\(what) (OpenSSL: \(drain()))")
    }
}

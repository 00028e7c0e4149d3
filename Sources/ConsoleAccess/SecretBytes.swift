internal import COpenSSL
import Foundation

/// Random bytes for salts, session ids and CSRF tokens, and the constant-time comparison
/// every secret is checked with.
enum SecretBytes {
    /// `count` bytes from the system's cryptographic generator (`getrandom(2)` on Linux,
    /// which is what `SystemRandomNumberGenerator` reads).
    static func random(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = generator.next()
            for _ in 0..<8 where index < count {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }

    /// Whether `a` and `b` are the same bytes, in a time that depends on their lengths only
    /// (OpenSSL's `CRYPTO_memcmp`): a caller learns nothing from how long a refusal took.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 }
        }
    }

    /// `bytes` in base64url without padding (RFC 4648 §5): safe in a cookie and a form field.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// `bytes` in standard base64 without padding: the B64 of PHC strings.
    static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of unpadded standard base64 `text`, or nil when it holds anything else
    /// (padding, whitespace, another alphabet, a non-canonical last character) or is longer
    /// than `maxBytes` decoded.
    static func fromBase64(_ text: Substring, maxBytes: Int) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= (maxBytes * 4 + 2) / 3, text.utf8.count % 4 != 1 else { return nil }
        let alphabet = text.utf8.allSatisfy { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2B || b == 0x2F
        }
        guard alphabet else { return nil }
        let padded = String(text) + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        // Only the canonical spelling: unused low bits of the last character must be zero,
        // so one value has one text (a stored hash cannot be changed and still verify).
        guard let data = Data(base64Encoded: padded), base64([UInt8](data)) == text else { return nil }
        return [UInt8](data)
    }
}

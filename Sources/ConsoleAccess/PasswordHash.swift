internal import COpenSSL
import ClientFoundation

/// Operators' passwords as the operators file stores them: scrypt (OpenSSL's), a memory-hard
/// function, in a PHC-style string `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (salt and hash in
/// unpadded standard base64).
///
/// The cost is N = 2^15, r = 8, p = 1: 32 MiB of memory and about 70 ms on a 2-core build
/// machine. A login is that slow once, which no one notices; a guesser holding a stolen
/// file pays 32 MiB and 70 ms per guess, on every core it has. 2^16 would take about
/// 150 ms here and 2^17 about 300 ms: too slow for a console whose logins are throttled
/// already (``LoginThrottle``) and that may verify a few at once.
///
/// A stored string read from a file is parsed strictly: anything malformed verifies as
/// false. Its cost parameters are bounded (at most 128 MiB and the work of N = 2^17,
/// r = 8), so a hostile file cannot make one login take minutes or gigabytes.
public enum PasswordHash {
    /// scrypt's cost parameters: N = 2^`log2N`, block size `r`, parallelism `p`.
    struct Cost: Sendable, Equatable {
        var log2N: Int
        var r: Int
        var p: Int

        /// Bytes scrypt's big array takes: 128 · r · N.
        var memory: Int { 128 * r << log2N }
        /// Work in units of one N = 1, r = 1 pass: N · r · p.
        var work: Int { (r * p) << log2N }

        /// Within what any stored hash may ask: N from 2^1 to 2^17, r from 1 to 32, p from 1
        /// to 16, at most 128 MiB, and no more work than N = 2^17, r = 8, p = 1.
        var isBounded: Bool {
            (1...17).contains(log2N) && (1...32).contains(r) && (1...16).contains(p)
                && memory <= Self.maxMemory && work <= Self.maxWork
        }

        static let maxMemory = 128 << 20
        static let maxWork = 8 << 17
    }

    /// The cost of every new hash (see the type's documentation for why).
    static let standard = Cost(log2N: 15, r: 8, p: 1)
    /// Bytes of salt in a new hash.
    static let saltBytes = 16
    /// Bytes of derived hash in a new hash.
    static let hashBytes = 32
    /// The longest password taken, in bytes.
    public static let maxPasswordBytes = 1024

    /// A new hash of `password`, with a fresh random salt.
    /// - Throws: ``ConsoleAccessError`` `.invalidArgument` when the password is empty or
    ///   longer than ``maxPasswordBytes``.
    public static func make(_ password: [UInt8]) throws(ConsoleAccessError) -> String {
        try make(password, cost: standard)
    }

    /// A new hash of `password` at `cost` (tests use a cheap one).
    static func make(_ password: [UInt8], cost: Cost, salt: [UInt8] = SecretBytes.random(saltBytes)) throws(ConsoleAccessError) -> String {
        guard !password.isEmpty else { throw ConsoleAccessError(.invalidArgument, "the password is empty") }
        guard password.count <= maxPasswordBytes else {
            throw ConsoleAccessError(.invalidArgument, "the password is longer than \(maxPasswordBytes) bytes")
        }
        guard cost.isBounded else {
            throw ConsoleAccessError(.invalidArgument, "scrypt cost N=2^\(cost.log2N), r=\(cost.r), p=\(cost.p) is out of bounds")
        }
        guard let hash = derive(password, salt: salt, cost: cost, length: hashBytes) else {
            throw ConsoleAccessError(.io, "scrypt failed (N=2^\(cost.log2N), r=\(cost.r), p=\(cost.p)): out of memory?")
        }
        return "$scrypt$ln=\(cost.log2N),r=\(cost.r),p=\(cost.p)$\(SecretBytes.base64(salt))$\(SecretBytes.base64(hash))"
    }

    /// Whether `password` is the one `stored` was made from. The comparison takes the same
    /// time however many bytes match; a `stored` string that is malformed or asks for a cost
    /// out of bounds is false, never a crash and never a long computation.
    public static func verify(_ password: [UInt8], _ stored: String) -> Bool {
        guard let parsed = parse(stored), !password.isEmpty, password.count <= maxPasswordBytes,
            let derived = derive(password, salt: parsed.salt, cost: parsed.cost, length: parsed.hash.count)
        else { return false }
        return SecretBytes.equal(derived, parsed.hash)
    }

    /// Whether `stored` is a hash ``verify(_:_:)`` would compute (well formed, cost in bounds).
    public static func isWellFormed(_ stored: String) -> Bool { parse(stored) != nil }

    /// The parts of a stored hash: nil unless it is exactly
    /// `$scrypt$ln=<1–17>,r=<1–32>,p=<1–16>$<8–64 bytes of salt>$<16–64 bytes of hash>`
    /// with a bounded cost.
    static func parse(_ stored: String) -> (cost: Cost, salt: [UInt8], hash: [UInt8])? {
        guard stored.utf8.count <= 256 else { return nil }
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else { return nil }
        let fields = parts[2].split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 3,
            let log2N = number(fields[0], "ln"), let r = number(fields[1], "r"), let p = number(fields[2], "p")
        else { return nil }
        let cost = Cost(log2N: log2N, r: r, p: p)
        guard cost.isBounded,
            let salt = SecretBytes.fromBase64(parts[3], maxBytes: 64), salt.count >= 8,
            let hash = SecretBytes.fromBase64(parts[4], maxBytes: 64), hash.count >= 16
        else { return nil }
        return (cost, salt, hash)
    }

    /// The value of `name=<1–3 decimal digits, no leading zero>`.
    private static func number(_ field: Substring, _ name: String) -> Int? {
        guard field.hasPrefix(name + "=") else { return nil }
        let digits = field.dropFirst(name.count + 1)
        guard (1...3).contains(digits.count), digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            digits.count == 1 || digits.first != "0"
        else { return nil }
        return Int(digits)
    }

    /// scrypt of `password` and `salt` at `cost`: `length` bytes, or nil when OpenSSL fails.
    static func derive(_ password: [UInt8], salt: [UInt8], cost: Cost, length: Int) -> [UInt8]? {
        guard cost.isBounded else { return nil }
        var out = [UInt8](repeating: 0, count: length)
        // OpenSSL's own limit, above what the bounds allow: the big array and the p blocks.
        let maxmem = UInt64(cost.memory + 128 * cost.r * (cost.p + 2) + (1 << 20))
        let ok = password.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                out.withUnsafeMutableBufferPointer { o in
                    pw.withMemoryRebound(to: CChar.self) { pc in
                        EVP_PBE_scrypt(
                            pc.baseAddress, pc.count, s.baseAddress, s.count, UInt64(1) << UInt64(cost.log2N),
                            UInt64(cost.r), UInt64(cost.p), maxmem, o.baseAddress, o.count)
                    }
                }
            }
        }
        return ok == 1 ? out : nil
    }
}

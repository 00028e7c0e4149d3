import ClientFoundation
import Foundation
import Testing

@testable import ConsoleAccess

/// Operators' passwords as scrypt hashes: a round trip, a wrong password, and stored
/// strings that are malformed or ask for a hostile cost, which verify as false quickly.
@Suite struct PasswordHashTests {
    static let cheap = PasswordHash.Cost(log2N: 4, r: 8, p: 1)
    static let password = Array("correct horse battery staple".utf8)

    @Test func aHashVerifiesItsPasswordAndNoOther() throws {
        let stored = try PasswordHash.make(Self.password, cost: Self.cheap)
        #expect(stored.hasPrefix("$scrypt$ln=4,r=8,p=1$"), "\(stored)")
        #expect(PasswordHash.verify(Self.password, stored))
        #expect(!PasswordHash.verify(Array("correct horse battery stapl".utf8), stored))
        #expect(!PasswordHash.verify(Self.password + [0x0A], stored), "a trailing newline is another password")
        #expect(!PasswordHash.verify([], stored))
        // Two hashes of one password differ (a fresh salt each) and both verify.
        let again = try PasswordHash.make(Self.password, cost: Self.cheap)
        #expect(again != stored && PasswordHash.verify(Self.password, again))
    }

    /// The standard cost is what the file's strings say, and one verification stays within
    /// what a login may take (the documented ~70 ms here, with room for a loaded machine).
    @Test func theStandardCostIsScryptAt2To15() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let stored = try PasswordHash.make(Self.password)
        #expect(stored.hasPrefix("$scrypt$ln=15,r=8,p=1$"), "\(stored)")
        let parsed = try #require(PasswordHash.parse(stored))
        #expect(parsed.salt.count == 16 && parsed.hash.count == 32)
        #expect(PasswordHash.verify(Self.password, stored))
        #expect(clock.now - start < .seconds(5), "two scrypt runs at 2^15 took \(clock.now - start)")
    }

    /// A known answer: RFC 7914 §12's second test vector ("password", "NaCl", N=1024, r=8,
    /// p=16, 64 bytes), so the hash is scrypt itself and not something like it.
    @Test func theHashIsScryptsKnownAnswer() throws {
        let expected =
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
        let derived = try #require(
            PasswordHash.derive(Array("password".utf8), salt: Array("NaCl".utf8), cost: .init(log2N: 10, r: 8, p: 16), length: 64))
        #expect(derived.map { String(format: "%02x", $0) }.joined() == expected)
        // What make stores is that function's first 32 bytes, under the parameters it names.
        let salt = Array("NaCl salt 16 byt".utf8)
        let stored = try PasswordHash.make(Array("password".utf8), cost: .init(log2N: 10, r: 8, p: 16), salt: salt)
        let parsed = try #require(PasswordHash.parse(stored))
        let again = PasswordHash.derive(Array("password".utf8), salt: salt, cost: .init(log2N: 10, r: 8, p: 16), length: 64)
        #expect(parsed.cost == .init(log2N: 10, r: 8, p: 16) && parsed.salt == salt)
        #expect(parsed.hash.count == 32 && again.map { Array($0.prefix(32)) } == parsed.hash)
    }

    @Test func emptyAndOverlongPasswordsAreRefused() {
        #expect(throws: ConsoleAccessError.self) { try PasswordHash.make([], cost: Self.cheap) }
        #expect(throws: ConsoleAccessError.self) {
            try PasswordHash.make([UInt8](repeating: 0x61, count: PasswordHash.maxPasswordBytes + 1), cost: Self.cheap)
        }
    }

    /// Malformed stored strings verify as false, never crash; hostile costs (a login that
    /// would take minutes or gigabytes) are refused before scrypt runs: each answer is quick.
    @Test func malformedAndHostileStoredHashesAreFalse() throws {
        let good = try PasswordHash.make(Self.password, cost: Self.cheap)
        let parts = good.split(separator: "$", omittingEmptySubsequences: false)
        let salt = parts[3]
        let hash = parts[4]
        let hostile = [
            "", "$", "$$$$", "scrypt", "$scrypt$", "$scrypt$ln=4,r=8,p=1$\(salt)",
            "$argon2id$v=19$m=65536,t=3,p=4$\(salt)$\(hash)",
            "$scrypt$ln=4,r=8,p=1$\(salt)$\(hash)$", "x$scrypt$ln=4,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=4,r=8$\(salt)$\(hash)", "$scrypt$r=8,ln=4,p=1$\(salt)$\(hash)",
            "$scrypt$ln=04,r=8,p=1$\(salt)$\(hash)", "$scrypt$ln=-4,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=4 ,r=8,p=1$\(salt)$\(hash)", "$scrypt$ln=,r=8,p=1$\(salt)$\(hash)",
            "$scrypt$ln=0,r=8,p=1$\(salt)$\(hash)",
            // Costs out of bounds: gigabytes of memory, minutes of work, absurd numbers.
            "$scrypt$ln=30,r=8,p=1$\(salt)$\(hash)", "$scrypt$ln=17,r=16,p=1$\(salt)$\(hash)",
            "$scrypt$ln=17,r=8,p=16$\(salt)$\(hash)", "$scrypt$ln=16,r=32,p=1$\(salt)$\(hash)",
            "$scrypt$ln=999,r=999,p=999$\(salt)$\(hash)",
            "$scrypt$ln=99999999999999999999,r=8,p=1$\(salt)$\(hash)",
            // Salt and hash: not base64, padded, too short, too long, empty.
            "$scrypt$ln=4,r=8,p=1$\(salt)=$\(hash)", "$scrypt$ln=4,r=8,p=1$!!!!$\(hash)",
            "$scrypt$ln=4,r=8,p=1$\(salt)$\(hash.dropLast(30))", "$scrypt$ln=4,r=8,p=1$AAAA$\(hash)",
            "$scrypt$ln=4,r=8,p=1$\(salt)$\(String(repeating: "A", count: 120))", "$scrypt$ln=4,r=8,p=1$$\(hash)",
            "$scrypt$ln=4,r=8,p=1$\(salt)$\(hash.dropLast())\u{0}", "$scrypt$ln=4,r=8,p=1$\(salt)$\(hash) ",
            "$scrypt$ln=4,r=8,p=1$\(salt)$" + String(repeating: "A", count: 100_000),
        ]
        let clock = ContinuousClock()
        for stored in hostile {
            let start = clock.now
            #expect(!PasswordHash.verify(Self.password, stored), "\(stored.prefix(80))")
            #expect(!PasswordHash.isWellFormed(stored), "\(stored.prefix(80))")
            #expect(clock.now - start < .milliseconds(500), "\(stored.prefix(80)) took \(clock.now - start)")
        }
        // The bounds' edge is still taken: 2^17 with r=8 (128 MiB) is well formed.
        #expect(PasswordHash.isWellFormed("$scrypt$ln=17,r=8,p=1$\(salt)$\(hash)"))
        #expect(PasswordHash.verify(Self.password, good), "the good one still verifies")
    }

    /// A changed byte of the hash, or of the salt, makes the password wrong.
    @Test func aChangedHashOrSaltIsAWrongPassword() throws {
        let good = try PasswordHash.make(Self.password, cost: Self.cheap)
        let parsed = try #require(PasswordHash.parse(good))
        var hash = parsed.hash
        hash[31] ^= 1
        var salt = parsed.salt
        salt[0] ^= 1
        let prefix = "$scrypt$ln=4,r=8,p=1$"
        #expect(!PasswordHash.verify(Self.password, prefix + SecretBytes.base64(parsed.salt) + "$" + SecretBytes.base64(hash)))
        #expect(!PasswordHash.verify(Self.password, prefix + SecretBytes.base64(salt) + "$" + SecretBytes.base64(parsed.hash)))
        #expect(PasswordHash.verify(Self.password, prefix + SecretBytes.base64(parsed.salt) + "$" + SecretBytes.base64(parsed.hash)))
    }

    /// Every one-byte change of a stored hash (seeded, so a failure repeats) is refused or a
    /// wrong password: none crashes, none still verifies. A last base64 character with other
    /// unused bits is refused too, so one hash has one spelling.
    @Test func everyOneByteChangeOfAStoredHashFails() throws {
        let good = try PasswordHash.make(Self.password, cost: Self.cheap)
        var generator = SeededGenerator(seed: 76)
        let alphabet = Array("$=,0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/ \u{0}\u{7F}é".unicodeScalars)
        var bytes = Array(good.unicodeScalars)
        for _ in 0..<2000 {
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            let original = bytes[index]
            bytes[index] = alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
            var text = ""
            text.unicodeScalars.append(contentsOf: bytes)
            if text != good {
                #expect(!PasswordHash.verify(Self.password, text), "\(text)")
            }
            bytes[index] = original
        }
        // The hash's last character carries 4 unused bits: "A"→"B" decodes alike in lax base64.
        let last = try #require(good.last)
        let twin = String(good.dropLast()) + String(last == "A" ? "B" : last == "Q" ? "R" : last == "g" ? "h" : last == "w" ? "x" : last)
        if twin != good {
            #expect(!PasswordHash.isWellFormed(twin), "\(twin)")
        }
    }
}

/// A small deterministic generator (SplitMix64) for repeatable random tests.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

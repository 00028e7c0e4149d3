/// The one hex rule of this package (docs/fleet-reports.md#device-keys): lowercase hex digits
/// `0-9a-f`, nothing else. Device ids, device keys, cohort files, batch signatures, digests
/// named in manifests and file names use it, on the device, in the collector and in the
/// commands alike; no module writes its own digit test.
package enum LowerHex {
    /// Whether `byte` is an ASCII `0`–`9` or `a`–`f`.
    @inlinable
    package static func isDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66)
    }

    /// Whether `bytes` are all lowercase hex digits (true for none).
    @inlinable
    package static func matches<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        bytes.allSatisfy(isDigit)
    }

    /// Whether `bytes` are exactly `count` lowercase hex digits.
    @inlinable
    package static func matches<Bytes: Collection<UInt8>>(_ bytes: Bytes, count: Int) -> Bool {
        bytes.count == count && bytes.allSatisfy(isDigit)
    }

    /// Whether `text` is exactly `count` lowercase hex digits.
    package static func matches(_ text: String, count: Int) -> Bool {
        matches(text.utf8, count: count)
    }

    /// `bytes` as lowercase hex, two digits a byte.
    package static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        Digest.hex(bytes)
    }

    /// The bytes `text` spells, two lowercase hex digits a byte; nil when it has another
    /// character or an odd count of digits.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = value(digits[i]), let low = value(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    /// The value of one lowercase hex digit, or nil.
    @inlinable
    package static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}

import ClientFoundation

/// The one hex rule of device identity (docs/fleet-reports.md#device-keys): lowercase hex digits
/// `0-9a-f`, nothing else, of an exact length. Device ids, device keys and cohort files use it, on
/// the device, in the collector and in the commands alike.
public enum LowerHex {
    /// Whether `byte` is an ASCII `0`–`9` or `a`–`f`.
    @inlinable
    public static func isDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66)
    }

    /// Whether `bytes` are exactly `count` lowercase hex digits.
    @inlinable
    public static func matches<Bytes: Collection<UInt8>>(_ bytes: Bytes, count: Int) -> Bool {
        bytes.count == count && bytes.allSatisfy(isDigit)
    }

    /// Whether `text` is exactly `count` lowercase hex digits.
    public static func matches(_ text: String, count: Int) -> Bool {
        matches(text.utf8, count: count)
    }

    /// `bytes` as lowercase hex, two digits a byte.
    public static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        Digest.hex(bytes)
    }
}

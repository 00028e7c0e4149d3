/// The one rule for app ids and channel names, shared by the manifest verifier, `publish`
/// and `init`, so a device is never set up for a name no signed manifest can carry.
///
/// ASCII letters, digits, `.`, `_` and `-`, starting with a letter or digit (a channel name
/// becomes a folder name in a release folder); app ids up to 255 bytes, channel names up
/// to 64.
package enum ReleaseIdentifier: String, Sendable, CaseIterable {
    case app
    case channel

    /// The longest allowed value, in bytes.
    package var maxLength: Int { self == .app ? 255 : 64 }

    /// Why `value` is not a valid identifier of this kind, or nil when it is.
    package func problem(_ value: String) -> String? {
        let ok =
            !value.isEmpty && value.utf8.count <= maxLength
            && value.utf8.allSatisfy { Self.isAlnum($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
            && value.utf8.first.map(Self.isAlnum) == true
        return ok ? nil : "expected 1–\(maxLength) ASCII letters, digits, '.', '_' or '-', starting with a letter or digit"
    }

    static func isAlnum(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }
}

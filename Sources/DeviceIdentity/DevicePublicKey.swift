import ClientFoundation

/// A device's public key: the 32 raw bytes of its Ed25519 public key, written as 64 lowercase hex
/// digits (`<root>/device-key.pub`, a collector's admit list, `fleet admit`). Every report batch
/// a device sends is signed with the private half (docs/fleet-reports.md#device-keys).
public struct DevicePublicKey: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The number of hex digits of a key.
    public static let hexDigits = 64

    /// The key as 64 lowercase hex digits.
    public let hex: String

    /// The key `hex`, or nil when it is not 64 lowercase hex digits.
    public init?(hex: String) {
        guard Self.isValid(hex) else { return nil }
        self.hex = hex
    }

    /// The key of these 32 raw bytes, or nil for another length.
    public init?(raw: [UInt8]) {
        guard raw.count == Self.hexDigits / 2 else { return nil }
        hex = LowerHex.encode(raw)
    }

    /// The key `hex`.
    /// - Throws: ``DeviceIdentityError`` ``DeviceIdentityErrorCode/invalidKey``:
    ///   `device key 'X': not 64 lowercase hex digits`.
    public init(validating hex: String) throws {
        guard let key = DevicePublicKey(hex: hex) else {
            throw DeviceIdentityError(.invalidKey, "device key \(Quoting.quoted(hex)): not \(Self.hexDigits) lowercase hex digits")
        }
        self = key
    }

    /// Whether `text` is 64 lowercase hex digits.
    public static func isValid(_ text: String) -> Bool { LowerHex.matches(text, count: hexDigits) }

    /// The key's 32 raw bytes (what Ed25519 verifies with).
    public var raw: [UInt8] { LowerHex.decode(hex) ?? [] }

    public var description: String { hex }

    public static func < (a: DevicePublicKey, b: DevicePublicKey) -> Bool { a.hex < b.hex }

    /// Decodes a string, refusing one that is not a key.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let key = DevicePublicKey(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a device key (\(Self.hexDigits) lowercase hex digits)")
        }
        self = key
    }

    /// Encodes the 64 hex digits as a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

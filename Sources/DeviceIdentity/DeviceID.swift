import ClientFoundation

/// A device id: 128 random bits made once when a device root is made, written as 32 lowercase hex
/// digits (`<root>/device-id`, shown by `clientctl status`). It is the device's place in every
/// staged rollout, what `id` and cohorts in a target compare, and the name a collector binds to the
/// device's key on first sight.
public struct DeviceID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The number of hex digits of an id.
    public static let hexDigits = 32

    /// The id as 32 lowercase hex digits.
    public let text: String

    /// The id `text`, or nil when it is not 32 lowercase hex digits.
    public init?(_ text: String) {
        guard Self.isValid(text) else { return nil }
        self.text = text
    }

    /// The id `text`.
    /// - Throws: ``DeviceIdentityError`` ``DeviceIdentityErrorCode/invalidId``:
    ///   `device id 'X': not 32 lowercase hex digits`.
    public init(validating text: String) throws {
        guard let id = DeviceID(text) else {
            throw DeviceIdentityError(.invalidId, "device id \(Quoting.quoted(text)): not \(Self.hexDigits) lowercase hex digits")
        }
        self = id
    }

    /// A new random id (the system's random source).
    public static func random() -> DeviceID {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(hexDigits / 2)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return DeviceID(unchecked: LowerHex.encode(bytes))
    }

    /// Whether `text` is 32 lowercase hex digits.
    public static func isValid(_ text: String) -> Bool { LowerHex.matches(text, count: hexDigits) }

    /// Whether `bytes` are 32 lowercase hex digits.
    public static func isValid<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool { LowerHex.matches(bytes, count: hexDigits) }

    private init(unchecked text: String) {
        self.text = text
    }

    public var description: String { text }

    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.text < b.text }

    /// Decodes a string, refusing one that is not an id.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = DeviceID(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a device id (\(Self.hexDigits) lowercase hex digits)")
        }
        self = id
    }

    /// Encodes the 32 hex digits as a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

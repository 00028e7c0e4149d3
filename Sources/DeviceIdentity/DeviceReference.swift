/// A device as an operator names it (`clientctl fleet admit`, `reject`, `forget`, a
/// collector's admin routes): by its id or by its public key. The two never overlap: an id is
/// 32 lowercase hex digits, a key 64.
public enum DeviceReference: Sendable, Hashable, CustomStringConvertible {
    /// The device by its id.
    case id(DeviceID)
    /// The device by its public key.
    case key(DevicePublicKey)

    /// The id or the key `text` names, or nil when it is neither.
    public init?(_ text: String) {
        if let id = DeviceID(text) {
            self = .id(id)
        } else if let key = DevicePublicKey(hex: text) {
            self = .key(key)
        } else {
            return nil
        }
    }

    /// The id, when the device is named by its id.
    public var id: DeviceID? {
        if case .id(let id) = self { return id }
        return nil
    }

    /// The id's or the key's lowercase hex digits.
    public var description: String {
        switch self {
        case .id(let id): return id.text
        case .key(let key): return key.hex
        }
    }
}

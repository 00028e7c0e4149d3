import DeviceIdentity

/// What a target expression reads of a device: its id and its labels.
public struct TargetDevice: Sendable, Equatable {
    /// The device id: 32 lowercase hex digits (`id` in the target language).
    public var id: String
    /// The device's labels.
    public var labels: DeviceLabels

    /// A device with this id and these labels.
    public init(id: String, labels: DeviceLabels) {
        self.id = id
        self.labels = labels
    }
}

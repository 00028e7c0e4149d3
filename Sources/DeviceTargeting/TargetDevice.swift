import DeviceIdentity

/// What a target expression reads of a device: its id and its labels.
public struct TargetDevice: Sendable, Equatable {
    /// The device id (`id` in the target language); nil when the question is about labels
    /// alone (a test of `id` then reads it as unset: `=` and `in` are false, `!=` and `not in` true).
    public var id: DeviceID?
    /// The device's labels.
    public var labels: DeviceLabels

    /// A device with this id and these labels.
    public init(id: DeviceID?, labels: DeviceLabels) {
        self.id = id
        self.labels = labels
    }
}

/// DeviceTargeting reads what DeviceIdentity defines (a target reads a device's id and labels), and
/// its public API takes those types (`TargetDevice`), so every module that imports DeviceTargeting
/// sees them too.
@_exported import DeviceIdentity

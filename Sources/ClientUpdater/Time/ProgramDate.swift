import Foundation

/// The date this device program was released: the first floor of every device's time
/// (docs/device-time.md#the-floor). A device whose clock reads earlier (a board with no
/// battery-backed clock boots in 1970) decides by this date at least.
///
/// A constant of the source, not of the build, so that builds are reproducible; it is
/// moved forward when a release is cut (docs/guides/development.md#releasing-clientctl), and
/// `ProgramDateTests` fails once it lags the newest commit by more than
/// ``maximumLag``.
public enum ProgramDate {
    /// 2026-11-27T00:00:00Z.
    public static let released = Date(timeIntervalSince1970: 1_795_737_600)
    /// How far the constant may lag the source it is part of.
    public static let maximumLag: TimeInterval = 400 * 86_400
}

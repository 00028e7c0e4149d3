import AuthenticatedTime
import ClientFoundation
import Foundation

/// `<root>/time.json`: the newest time the device has verified, and its last authenticated
/// time (docs/device-layout.md#the-root, docs/device-time.md). Replaced atomically under
/// `<root>/time.lock`; a missing or unreadable file is a floor of the program's date.
package struct TimeRecord: Codable, Sendable, Equatable {
    package static let currentFormat = "clientctl-time-v1"

    package var format = TimeRecord.currentFormat
    /// The newest verified time.
    package var floor: Date
    /// What verified it (`release 1.4.0 published`, `time servers …`).
    package var floorSource: String
    /// The last interval a quorum of time servers vouched for, with the clocks it was read on.
    package var authenticated: AuthenticatedTime?
    /// Why the last attempt to authenticate the time failed (nil: it succeeded, or none was made).
    package var authenticationFailure: String?
    /// When the last attempt was made (the wall clock, for status).
    package var authenticationTried: Date?
    /// The last attempt's decision when it decided no interval, or one not used (who
    /// answered, which overlapped, why that was not enough); a decided one is
    /// ``authenticated``'s own. Nil when it failed before any decision (no client).
    package var undecided: RoughtimeTally?
    /// The last wrong-clock verdict reported to the collector (a report per episode).
    package var reported: ClockVerdict?

    package init(floor: Date, floorSource: String) {
        self.floor = floor
        self.floorSource = floorSource
    }

    static func path(_ layout: RootLayout) -> String { layout.root + "/time.json" }
    static func lockPath(_ layout: RootLayout) -> String { layout.root + "/time.lock" }

    /// The record on disk, or nil when missing or unreadable (never a failure: the floor
    /// then starts again from the program's date).
    package static func read(_ layout: RootLayout) -> TimeRecord? {
        guard let data = try? BoundedFile.read(path(layout), cap: 64 * 1024, code: UpdaterError.Code.corruptState) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let record = try? decoder.decode(TimeRecord.self, from: data), record.format == currentFormat else { return nil }
        return record
    }

    /// Writes the record atomically.
    package func write(_ layout: RootLayout) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        try AtomicFile.write(try encoder.encode(self) + Data("\n".utf8), to: Self.path(layout))
    }
}

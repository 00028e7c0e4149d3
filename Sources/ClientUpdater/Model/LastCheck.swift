import ClientFoundation
import Foundation

/// `<root>/last-check.json`: the outcome of the last update check, kept apart from
/// `state.json` so a failed check leaves the device state byte-identical.
package enum LastCheck {
    static func path(_ layout: RootLayout) -> String { layout.root + "/last-check.json" }

    /// Records the outcome atomically.
    package static func record(_ record: DeviceState.CheckRecord, _ layout: RootLayout) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        try AtomicFile.write(try encoder.encode(record) + Data("\n".utf8), to: path(layout))
    }

    /// The last recorded outcome, if any.
    package static func read(_ layout: RootLayout) -> DeviceState.CheckRecord? {
        guard let data = try? BoundedFile.read(path(layout), cap: BoundedFile.localStateCap, code: UpdaterError.Code.corruptState) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(DeviceState.CheckRecord.self, from: data)
    }
}

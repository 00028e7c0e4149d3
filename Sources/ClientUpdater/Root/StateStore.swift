import ClientFoundation
import Foundation

/// Reads and writes `state.json` atomically.
///
/// A state file that fails to parse (after power loss it can be empty or full of NULs)
/// is never a reason to delete versions: ``load(_:)`` reports it, and the caller rebuilds
/// the state from the complete version folders.
package enum StateStore {
    /// The result of reading `state.json`.
    package enum LoadResult: Sendable {
        /// No state file yet (a new root).
        case missing
        /// A valid state.
        case loaded(DeviceState)
        /// The file exists but cannot be used; the reason says why.
        case corrupt(String)
        /// The file is not a state file at all (over the 1 MiB cap, not a regular file):
        /// it is neither read nor moved aside; the error says what to do.
        case refused(UpdaterError)
    }

    /// Reads `state.json` without throwing on corruption.
    package static func read(_ layout: RootLayout) -> LoadResult {
        let data: Data
        do {
            guard let bytes = try BoundedFile.read(layout.state, cap: BoundedFile.localStateCap, code: UpdaterError.Code.corruptState) else {
                return .missing
            }
            data = bytes
        } catch {
            return .refused(error)
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let state = try decoder.decode(DeviceState.self, from: data)
            guard state.format == DeviceState.currentFormat else { return .corrupt("unknown format '\(state.format)'") }
            return .loaded(state)
        } catch {
            return .corrupt("\(error)")
        }
    }

    /// Reads `state.json`; a missing or corrupt file gives a fresh state (the caller
    /// re-derives `current` by selection from the installed folders).
    package static func load(_ layout: RootLayout) -> DeviceState {
        switch read(layout) {
        case .loaded(let s): return s
        case .missing, .corrupt, .refused: return DeviceState()
        }
    }

    /// Writes `state.json` atomically (temp file, fsync, rename, fsync folder), unless it
    /// holds these bytes already: a start-up that changes nothing writes nothing, so it
    /// works on a full disk (docs/device-layout.md#a-full-disk).
    package static func save(_ state: DeviceState, _ layout: RootLayout) throws {
        let bytes = try encode(state)
        if let held = try? BoundedFile.read(layout.state, cap: BoundedFile.localStateCap, code: UpdaterError.Code.corruptState), held == bytes {
            return
        }
        try AtomicFile.write(bytes, to: layout.state)
    }

    /// The exact bytes `save` writes: pretty, sorted, ISO 8601 dates.
    package static func encode(_ state: DeviceState) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(state) + Data("\n".utf8)
    }
}

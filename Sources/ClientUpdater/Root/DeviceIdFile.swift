import ClientFoundation
import DeviceIdentity
import Foundation

/// `<root>/device-id`: 128 random bits made once at `init` (32 lowercase hex characters),
/// the device's place in every staged rollout. Kept by `init --force`; a root made before
/// device ids gets one at its first use. Read and written here alone, as the key's files are
/// beside it (``DeviceKeyFile``).
package enum DeviceIdFile {
    /// The id of the root, made (atomically) when it has none or an unreadable one.
    /// - Throws: ``UpdaterError`` `.io` when the file cannot be written.
    package static func readOrCreate(_ layout: RootLayout) throws -> DeviceID {
        if let id = read(layout) { return id }
        let id = DeviceID.random()
        try AtomicFile.write(Data((id.text + "\n").utf8), to: layout.deviceId)
        return id
    }

    /// The id of the root, or nil when it has none (or the file is not an id).
    package static func read(_ layout: RootLayout) -> DeviceID? {
        guard let data = try? BoundedFile.read(layout.deviceId, cap: 256, code: UpdaterError.Code.corruptState) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return DeviceID(text)
    }
}

extension RootLayout {
    /// `device-id`.
    package var deviceId: String { root + "/device-id" }
}

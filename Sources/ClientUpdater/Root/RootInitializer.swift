import Foundation

/// Creates a device root from a validated config (`clientctl init`).
package enum RootInitializer {
    /// Creates `layout.root` if needed, writes `config.json` atomically and gives the root
    /// its ``DeviceIdentity`` (kept when it has one).
    ///
    /// - Parameters:
    ///   - force: overwrite an existing config; installed versions and state are kept
    ///     either way.
    ///   - store: the channel's store folder (``RootLayout/store(_:)``), created now so a
    ///     first install that fails leaves the root exactly as `init` made it.
    /// - Throws: ``UpdaterError`` `.alreadyExists` when a config exists and `force` is off,
    ///   `.invalidArgument` for a value out of range (checked before anything is created).
    package static func write(_ config: DeviceConfig, to layout: RootLayout, force: Bool, store: String? = nil) throws {
        let bytes = try config.encoded()
        if FileManager.default.fileExists(atPath: layout.config) && !force {
            throw UpdaterError(.alreadyExists, "\(layout.config) exists already: this root is initialized (`force` overwrites its config)")
        }
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: layout.root, isDirectory: &isDir), !isDir.boolValue {
            throw UpdaterError(.alreadyExists, "\(layout.root) exists and is not a folder")
        }
        try AtomicFile.makeDirectory(layout.root)
        let lock = try FileLock(path: layout.lock, wait: 30)
        defer { withExtendedLifetime(lock) {} }
        try AtomicFile.write(bytes, to: layout.config)
        _ = try DeviceIdentity.readOrCreate(layout)
        if let store { try AtomicFile.makeDirectory(store) }
    }
}

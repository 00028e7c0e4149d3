import ClientFoundation
import DeviceSetup
import Foundation

/// Creates a device root from a validated config (`clientctl init`).
package enum RootInitializer {
    /// Creates `layout.root` if needed, writes `config.json` atomically and gives the root
    /// its ``DeviceIdFile`` (kept when it has one). The wait for the root's lock (up to
    /// `lockWait`, while another process installs) suspends the caller, and the
    /// writes run on the ``BlockingExecutor``.
    ///
    /// - Parameters:
    ///   - force: overwrite an existing config; installed versions and state are kept
    ///     either way.
    ///   - store: the channel's store folder (``RootLayout/store(_:)``), created now so a
    ///     first install that fails leaves the root exactly as `init` made it.
    /// - Throws: ``UpdaterError`` `.alreadyExists` when a config exists and `force` is off,
    ///   `.invalidArgument` for a value out of range (checked before anything is created),
    ///   `.locked` when another process holds the root's lock past `lockWait`.
    package static func write(
        _ config: DeviceConfig, to layout: RootLayout, force: Bool, store: String? = nil, lockWait: Duration = .seconds(30)
    ) async throws {
        let bytes = try config.rootBytes()
        try await BlockingExecutor.run { try prepare(layout, force: force) }
        let lock = try await FileLock.acquire(path: layout.lock, wait: lockWait)
        try await BlockingExecutor.run {
            try withExtendedLifetime(lock) { try writeLocked(bytes, to: layout, store: store) }
        }
    }

    /// ``write(_:to:force:store:lockWait:)`` for synchronous callers (test fixtures making a
    /// fresh root): the same writes on the calling thread, and the root's lock taken only
    /// if it is free now (never a wait).
    /// - Throws: as ``write(_:to:force:store:lockWait:)``; `.locked` at once when another
    ///   process holds the lock.
    package static func writeUnlessLocked(_ config: DeviceConfig, to layout: RootLayout, force: Bool, store: String? = nil) throws {
        let bytes = try config.rootBytes()
        try prepare(layout, force: force)
        guard let lock = try FileLock.attempt(path: layout.lock) else { throw FileLock.lockedError(layout.lock, wait: .zero) }
        try withExtendedLifetime(lock) { try writeLocked(bytes, to: layout, store: store) }
    }

    /// Creates the root from `config` only if it holds no config yet, deciding with the
    /// root's lock held: of two first starts at once, one writes and the other finds the
    /// root made (a packaged app's first run, ``DeviceTemplate``).
    /// - Returns: true when this call wrote the config.
    /// - Throws: as ``write(_:to:force:store:lockWait:)``.
    package static func createIfAbsent(
        _ config: DeviceConfig, to layout: RootLayout, store: String? = nil, lockWait: Duration = .seconds(30)
    ) async throws -> Bool {
        let bytes = try config.rootBytes()
        try await BlockingExecutor.run { try prepare(layout, force: true) }
        let lock = try await FileLock.acquire(path: layout.lock, wait: lockWait)
        return try await BlockingExecutor.run {
            try withExtendedLifetime(lock) {
                if FileManager.default.fileExists(atPath: layout.config) { return false }
                try writeLocked(bytes, to: layout, store: store)
                return true
            }
        }
    }

    /// Rewrites an existing root's config with the root's lock held: `change` gets the
    /// config as it is on disk and returns whether it changed it (then it is saved
    /// atomically, after the same validation as `init`).
    /// - Throws: ``UpdaterError`` `.configInvalid` for a missing or invalid config,
    ///   `.locked` past `lockWait`, or what `change` throws (nothing is written then).
    package static func update(
        _ layout: RootLayout, lockWait: Duration = .seconds(30), _ change: @escaping @Sendable (inout DeviceConfig) throws -> Bool
    ) async throws -> DeviceConfig {
        let lock = try await FileLock.acquire(path: layout.lock, wait: lockWait)
        return try await BlockingExecutor.run {
            try withExtendedLifetime(lock) {
                var config = try DeviceConfig.load(layout)
                if try change(&config) { try config.save(layout) }
                return config
            }
        }
    }

    /// Refuses an initialized root (unless `force`) or a file in its place; creates the folder.
    private static func prepare(_ layout: RootLayout, force: Bool) throws {
        if FileManager.default.fileExists(atPath: layout.config) && !force {
            throw UpdaterError(.alreadyExists, "\(layout.config) exists already: this root is initialized (`force` overwrites its config)")
        }
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: layout.root, isDirectory: &isDir), !isDir.boolValue {
            throw UpdaterError(.alreadyExists, "\(layout.root) exists and is not a folder")
        }
        try AtomicFile.makeDirectory(layout.root)
    }

    /// The writes, with the root's lock held.
    private static func writeLocked(_ bytes: Data, to layout: RootLayout, store: String?) throws {
        try AtomicFile.write(bytes, to: layout.config)
        _ = try DeviceIdFile.readOrCreate(layout)
        if let store { try AtomicFile.makeDirectory(store) }
    }
}

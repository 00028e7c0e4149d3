import ClientFoundation
import DeviceSetup
import Foundation

extension DeviceConfig {
    /// Changes a root's `config.json` after `init` (`clientctl label set`): reads it with the
    /// root's lock held, applies `change`, checks every value and writes it atomically, so
    /// two edits at once never lose one and a refused edit writes nothing. A running agent
    /// reads the new settings it decides by at its next check.
    /// - Returns: the config before and after the change.
    /// - Throws: what `change` throws (nothing is written); ``UpdaterError`` `.configInvalid`
    ///   when the config does not read, `.invalidArgument` when a changed value is out of
    ///   range, `.locked` when another process holds the root's lock past `lockWait`.
    package static func edit(
        _ layout: RootLayout, lockWait: Duration = .seconds(30), _ change: @escaping @Sendable (inout DeviceConfig) throws -> Void
    ) async throws -> (before: DeviceConfig, after: DeviceConfig) {
        let lock = try await FileLock.acquire(path: layout.lock, wait: lockWait)
        return try await BlockingExecutor.run {
            try withExtendedLifetime(lock) {
                let before = try load(layout)
                var after = before
                try change(&after)
                if after != before { try after.save(layout) }
                return (before, after)
            }
        }
    }
}

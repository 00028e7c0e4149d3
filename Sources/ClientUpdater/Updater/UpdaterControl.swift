import ClientShim
import Foundation

/// The `/__clientctl/` control endpoints of `clientctl serve` (and any host whose shim
/// talks HTTP), answered by an ``Updater``.
///
/// ```swift
/// server.setControlHandler(UpdaterControl(updater))
/// ```
public struct UpdaterControl: ControlHandler {
    public let updater: Updater
    private let check: @Sendable () async throws -> Void

    /// Answers for `updater`.
    /// - Parameters:
    ///   - updater: the updater whose root the endpoints answer for.
    ///   - check: how a page's check runs (default: `updater.checkForUpdates()`); a host
    ///     with an apply driver passes its agent's check, which the driver sees.
    public init(_ updater: Updater, check: (@Sendable () async throws -> Void)? = nil) {
        self.updater = updater
        self.check = check ?? { _ = try await updater.checkForUpdates() }
    }

    public func startupDidComplete() async throws -> ControlStatus {
        try await startupDidComplete(version: nil)
    }

    public func startupDidComplete(version: String?) async throws -> ControlStatus {
        try await updater.startupDidComplete(version: version)
        return try await status()
    }

    /// Holds nothing (no apply driver): the lease ends at once, at the updater's time.
    public func holdUpdate(lease: String, for duration: Duration, version: String?) async throws -> Date { updater.now() }

    /// Holds nothing (no download holds): the lease ends at once, at the updater's time.
    public func holdDownloads(lease: String, for duration: Duration, version: String?) async throws -> Date { updater.now() }

    public func checkForUpdates() async throws -> ControlStatus {
        // The outcome reaches pages as `updateAvailable` / `error` events; a failed check
        // is an event, not a failed request.
        try? await check()
        return try await status()
    }

    public func switchToPendingVersion() async throws -> ControlStatus {
        try await switchToPendingVersion(version: nil)
    }

    public func switchToPendingVersion(version: String?) async throws -> ControlStatus {
        try await updater.reload(from: version)
        return try await status()
    }

    public func status() async throws -> ControlStatus {
        let state = StateStore.load(updater.layout)
        return ControlStatus(
            current: updater.currentVersion(in: state), pending: state.pending,
            lastKnownGood: state.lastKnownGood, inTrial: state.trial != nil && state.trial?.version == state.current)
    }

    public func events() async -> AsyncStream<ControlEvent> {
        let source = updater.events()
        return AsyncStream { continuation in
            let task = Task {
                for await event in source {
                    switch event {
                    case .updateAvailable(let version): continuation.yield(.updateAvailable(version: version))
                    case .error(let message): continuation.yield(.error(message: message))
                    case .downloadProgress(let version, let completed, let total):
                        continuation.yield(.downloadProgress(version: version, completed: completed, total: total))
                    case .watchdog(.failed(_, _, _, let revertedTo)), .watchdog(.revoked(_, let revertedTo)):
                        // A page left on the failed (or revoked) version reloads.
                        continuation.yield(.reload(to: revertedTo))
                    case .watchdog, .switched, .installNote: break
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// `--events`: one JSON object per line on stdout for every engine event, so a test or a
/// supervisor can follow the shell (docs/native-shell.md#events). Without `--events` it
/// prints nothing. Lines are written whole under a lock, from any thread.
final class EventLog: Sendable {
    // `enabled` is immutable; writes are serialized by `writing`'s lock.
    private let enabled: Bool
    private let writing = Mutex(())
    private let launched = ContinuousClock.now

    init(enabled: Bool) { self.enabled = enabled }

    /// Milliseconds since the shell started.
    var millisecondsSinceLaunch: Int {
        Int(clamping: (ContinuousClock.now - launched).inMilliseconds)
    }

    func emit(_ event: String, _ fields: [String: Any] = [:]) {
        guard enabled else { return }
        var object = fields
        object["event"] = event
        if object["ms"] == nil { object["ms"] = millisecondsSinceLaunch }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        writing.withLock { _ in Console.out(data + Data("\n".utf8)) }
    }

    /// The line for an engine event.
    func emit(_ event: UpdaterEvent) {
        switch event {
        case .updateAvailable(let version): emit("updateAvailable", ["version": version])
        case .error(let message): emit("error", ["message": message])
        case .switched(let version): emit("switched", ["version": version])
        case .downloadProgress, .installNote: break
        case .watchdog(let watchdog):
            guard var fields = Self.fields(of: watchdog) else { return }
            fields["message"] = watchdog.message
            emit("watchdog", fields)
        }
    }

    /// The fields of a watchdog line; nil for what the watchdog only reports to commands.
    static func fields(of event: WatchdogEvent) -> [String: Any]? {
        switch event {
        case .trialStarted(let v): return ["kind": "trialStarted", "version": v]
        case .committed(let v): return ["kind": "committed", "version": v]
        case .failed(let v, let reason, let blacklisted, let to):
            return ["kind": "failed", "version": v, "reason": reason.rawValue, "blacklisted": blacklisted, "revertedTo": to.description]
        case .revoked(let v, let to): return ["kind": "revoked", "version": v, "revertedTo": to.description]
        case .refused(let acknowledged, let onTrial): return ["kind": "refused", "version": acknowledged, "onTrial": onTrial]
        case .noTrial, .nothingToRollBack: return nil
        }
    }
}

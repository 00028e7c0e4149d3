import ClientFoundation
import Foundation
import Synchronization

/// What a host (`clientctl serve`, the native shell) tells systemd about the version it
/// serves, through a `SystemdNotifier`: `READY=1` with a `STATUS=` line once the host is
/// ready, then a new `STATUS=` whenever the served version or its trial state changes, and
/// `STOPPING=1` at the end (docs/serving.md#systemd, docs/native-shell.md#systemd).
///
/// It follows the updater's events in order: a switch names the served version, and the
/// watchdog event the updater reports right after it (a trial started, or the failure or
/// revocation that caused the switch) its state, so no status is sent between the two;
/// the start-up report fills in what no event has told yet. Without `NOTIFY_SOCKET` it
/// sends nothing.
///
/// `DeviceAgent` (ClientEngine) keeps one told of every event; a host under systemd calls
/// ``ready(_:)`` once it serves, and ``watchdog()`` every ``watchdogInterval``.
public final class SupervisorStatus: Sendable {
    // `notifier` is immutable (and Sendable); the rest is in `state`, and datagrams are sent
    // under its lock, so systemd gets them in the order decided.
    /// Writes the `STATUS=` line from the served version and its state, `trial` or `committed`.
    public typealias Describe = @Sendable (_ version: String, _ state: String) -> String

    /// The notifier, `nil` outside systemd.
    package let notifier: SystemdNotifier?
    private struct State {
        var version: String?
        /// `nil` between a switch and the watchdog event that names the new version's state.
        var onTrial: Bool?
        var describe: Describe?
        var readySent = false
        var lastStatus: String?
        /// `STOPPING=1` was sent: it is the last word (no `WATCHDOG=1` or `STATUS=` after it,
        /// though a host's main loop may run on while the engine shuts down).
        var stopping = false
    }
    private let state = Mutex(State())

    /// - Parameter notifier: by default the one `NOTIFY_SOCKET` names; `nil` sends nothing.
    public init(notifier: SystemdNotifier? = SystemdNotifier()) {
        self.notifier = notifier
    }

    /// How often the host sends ``watchdog()``: `nil` when systemd runs no watchdog for it.
    public var watchdogInterval: Duration? { notifier?.watchdogInterval }

    /// The state start-up ended in, unless events told it already (they are as new or newer).
    package func started(_ report: LifecycleReport) {
        let served = report.servingDirectory.map { URL(fileURLWithPath: $0).lastPathComponent } ?? report.current.description
        update { state in
            if state.version == nil { state.version = served }
            if state.version == served && state.onTrial == nil { state.onTrial = report.trial != nil }
        }
    }

    /// Follows one event of the updater.
    package func apply(_ event: UpdaterEvent) {
        update { state in
            switch event {
            case .switched(let served) where served != state.version:
                state.version = served
                state.onTrial = nil  // the watchdog event that follows tells
            case .watchdog(.trialStarted(let trial)):
                state.version = trial
                state.onTrial = true
            case .watchdog(.committed(let committed)) where committed == state.version:
                state.onTrial = false
            case .watchdog(.failed), .watchdog(.revoked):
                state.onTrial = false  // the switch to the version reverted to came first
            default: break
            }
        }
    }

    /// The host is ready: `READY=1` with the status `describe` writes from the served
    /// version and `trial` or `committed`, now or as soon as both are known; after it,
    /// `STATUS=` on every change. Again is a no-op.
    public func ready(_ describe: @escaping Describe) {
        update { state in
            if state.describe == nil { state.describe = describe }
        }
    }

    /// `WATCHDOG=1`, until ``stopping()``.
    public func watchdog() {
        state.withLock { state in
            guard !state.stopping else { return }
            notifier?.watchdog()
        }
    }

    /// `STOPPING=1`, once; nothing is sent after it.
    public func stopping() {
        state.withLock { state in
            guard !state.stopping else { return }
            state.stopping = true
            notifier?.stopping()
        }
    }

    /// Changes the state under the lock, then sends what the change calls for.
    private func update(_ change: (inout State) -> Void) {
        state.withLock { state in
            change(&state)
            guard !state.stopping, let notifier, let describe = state.describe, let version = state.version, let onTrial = state.onTrial else {
                return
            }
            let status = describe(version, onTrial ? "trial" : "committed")
            if !state.readySent {
                state.readySent = true
                notifier.ready(status: status)
            } else if status != state.lastStatus {
                notifier.status(status)
            }
            state.lastStatus = status
        }
    }
}

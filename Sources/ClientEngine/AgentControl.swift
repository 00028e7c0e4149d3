import ClientShim
import ClientUpdater
import Foundation
import Synchronization

/// The control endpoints of `clientctl serve` with an apply driver behind them
/// (docs/apply-policies.md#serve): the updater's answers (`UpdaterControl`), plus the
/// page's input activity, its leases and its navigations for the driver. A page whose
/// shim is heard from (any call, the shim's status poll included) can be switched in
/// place: the shim reloads it; without one the switch waits for a navigation or a start.
package struct AgentControl: ControlHandler {
    /// How recent a shim's call must be for a switch in place.
    package static let pageHeardWithin: TimeInterval = 25

    private let control: UpdaterControl
    private let apply: ApplyDriver
    private let heard: PageContact

    /// Answers for `agent`'s updater and feeds its apply driver.
    package init(_ agent: DeviceAgent, now: @escaping @Sendable () -> Date = { Date() }) {
        control = UpdaterControl(agent.updater)
        apply = agent.apply
        let heard = PageContact(now: now)
        self.heard = heard
        apply.showWhen { heard.within(Self.pageHeardWithin) }
    }

    package func startupDidComplete() async throws -> ControlStatus { try await startupDidComplete(version: nil) }
    package func checkForUpdates() async throws -> ControlStatus { try await checkForUpdates(version: nil) }
    package func switchToPendingVersion() async throws -> ControlStatus { try await switchToPendingVersion(version: nil) }

    package func startupDidComplete(version: String?) async throws -> ControlStatus {
        heard.now()
        return try await control.startupDidComplete(version: version)
    }
    package func checkForUpdates(version: String?) async throws -> ControlStatus {
        heard.now()
        return try await control.checkForUpdates(version: version)
    }
    package func switchToPendingVersion(version: String?) async throws -> ControlStatus {
        heard.now()
        return try await control.switchToPendingVersion(version: version)
    }
    package func status() async throws -> ControlStatus {
        heard.now()
        let status = try await control.status()
        // A page polls while a version is staged: the moment a switch in place may happen.
        if status.pending != nil { apply.wake() }
        return status
    }
    package func events() async -> AsyncStream<ControlEvent> { await control.events() }

    package func userActivity(version: String?) async {
        heard.now()
        apply.noteInput()
    }

    package func holdUpdate(lease: String, seconds: Double, version: String?) async throws -> Date {
        heard.now()
        return apply.hold(lease: "page-" + lease, seconds: seconds)
    }

    package func pageNavigates() async {
        guard apply.waitsForNavigation else { return }
        _ = await apply.navigated()
    }
}

/// When a page's shim was last heard from.
final class PageContact: Sendable {
    private let last = Mutex<Date?>(nil)
    private let clock: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date) { clock = now }

    func now() {
        let t = clock()
        last.withLock { $0 = t }
    }

    func within(_ seconds: TimeInterval) -> Bool {
        guard let heard = last.withLock({ $0 }) else { return false }
        return abs(clock().timeIntervalSince(heard)) <= seconds
    }
}

import ClientFoundation
import Foundation
import TestSupport
import Testing

@testable import ClientUpdater

/// What `serve` and the shell tell systemd as the updater's events come, read from a real
/// notification socket: READY=1 once, then a STATUS for every settled state, none between
/// a switch and the watchdog event that names the new version's state.
@Suite struct SupervisorStatusTests {
    static func report(serving id: String, trial: String?) -> LifecycleReport {
        LifecycleReport(
            current: .installed(id), servingDirectory: "/root/serving/\(id)", pending: nil, lastKnownGood: nil, trial: trial,
            blacklist: [], retry: [], events: [], removed: [], failed: nil, shellUpdateReset: false)
    }

    @Test func readyOnceThenAStatusForEverySettledState() async throws {
        let tmp = try TemporaryDirectory("supervisor")
        let listener = try NotifyListener(path: tmp("notify.sock"))
        let status = SupervisorStatus(notifier: SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address]))
        let describe: SupervisorStatus.Describe = { version, state in "serving \(version) (\(state))" }

        // Start-up: its events may reach the host before or after the report; both say the same.
        status.apply(.switched(version: "1.0.0"))
        status.ready(describe)
        status.started(Self.report(serving: "1.0.0", trial: "1.0.0"))
        status.apply(.watchdog(.trialStarted(version: "1.0.0")))
        status.apply(.watchdog(.committed(version: "1.0.0")))
        // A switch to pending: nothing until the trial is reported.
        status.apply(.switched(version: "1.1.0"))
        status.apply(.watchdog(.trialStarted(version: "1.1.0")))
        // Its trial fails: the switch back comes first, then the failure.
        status.apply(.switched(version: "1.0.0"))
        status.apply(.watchdog(.failed(version: "1.1.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.0.0"))))
        status.apply(.updateAvailable(version: "1.2.0"))
        status.stopping()

        try await listener.wait(for: "STOPPING=1") { $0.last?["STOPPING"] == "1" }
        #expect(
            listener.datagrams == [
                "READY=1\nSTATUS=serving 1.0.0 (trial)", "STATUS=serving 1.0.0 (committed)", "STATUS=serving 1.1.0 (trial)",
                "STATUS=serving 1.0.0 (committed)", "STOPPING=1",
            ])
    }

    @Test func nothingBeforeReadyAndNothingWithoutNotifySocket() async throws {
        let tmp = try TemporaryDirectory("supervisor")
        let listener = try NotifyListener(path: tmp("notify.sock"))
        let status = SupervisorStatus(notifier: SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address]))
        status.started(Self.report(serving: "1.0.0", trial: nil))
        status.apply(.switched(version: "1.1.0"))
        status.apply(.watchdog(.trialStarted(version: "1.1.0")))
        status.ready { version, state in "showing \(version) (\(state))" }
        status.stopping()
        try await listener.wait(for: "STOPPING=1") { $0.last?["STOPPING"] == "1" }
        #expect(listener.datagrams == ["READY=1\nSTATUS=showing 1.1.0 (trial)", "STOPPING=1"])

        let silent = SupervisorStatus(notifier: SystemdNotifier(environment: [:]))
        #expect(silent.notifier == nil && silent.watchdogInterval == nil)
        silent.ready { version, _ in version }
        silent.apply(.switched(version: "1.0.0"))
        silent.watchdog()
        silent.stopping()
    }
}

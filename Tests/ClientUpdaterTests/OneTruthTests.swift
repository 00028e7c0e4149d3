import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Issue 9: an acknowledgement is bound to a version, an agent is the only writer of its
/// root's watchdog, and there is one update check.
@Suite struct OneTruthTests {
    // MARK: acknowledgements name a version

    @Test func theStateMachineRefusesAnAcknowledgementOfAnotherVersion() {
        var watchdog = Watchdog(timeout: .seconds(10))
        var state = DeviceState()
        state.lastKnownGood = "1.1.0"
        state.current = "1.1.0"
        state.pending = "1.3.0"
        _ = watchdog.activate("1.3.0", state: &state, now: .seconds(0), trial: .detached(at: Date(timeIntervalSince1970: 0)))
        let before = (watchdog, state)
        let refused = watchdog.startupDidComplete(version: "1.1.0", state: &state, now: .seconds(1), available: ["1.1.0", "1.3.0"])
        #expect(refused == [.report(.refused(acknowledged: "1.1.0", onTrial: "1.3.0"))])
        #expect(watchdog == before.0 && state == before.1, "a refused acknowledgement changes nothing")
        let committed = watchdog.startupDidComplete(version: "1.3.0", state: &state, now: .seconds(2), available: ["1.1.0", "1.3.0"])
        #expect(committed.contains(.report(.committed(version: "1.3.0"))))
        #expect(state.lastKnownGood == "1.3.0" && state.trial == nil)
    }

    @Test func anOldPagesAcknowledgementLeavesTheTrialAlone() async throws {
        let rig = try LifecycleRig()
        let updater = rig.makeUpdater()
        try await updater.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        try await rig.publishAndSwitch("1.1.0", on: updater)
        try await updater.startupDidComplete(version: "1.1.0")
        try await rig.publishAndSwitch("1.3.0", on: updater)
        let stateBefore = try Data(contentsOf: URL(fileURLWithPath: rig.layout.state))

        let error = await #expect(throws: UpdaterError.self) { try await updater.startupDidComplete(version: "1.1.0") }
        #expect(error?.code == .conflict && error?.kind == .dataError)
        #expect(error?.message.contains("1.3.0 is on trial, not 1.1.0") == true, "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.layout.state)) == stateBefore, "state.json untouched")

        // A switch asked by a page of another version than the one served is refused too.
        rig.channel.publish("1.4.0")
        try await updater.checkForUpdates()
        let stale = await #expect(throws: UpdaterError.self) { try await updater.reload(from: "1.1.0") }
        #expect(stale?.code == .conflict)
        #expect(rig.state.current == "1.3.0" && rig.state.trial?.version == "1.3.0")

        // The trial still runs: the deadline fails it, the old page's word did not count.
        let events = updater.events()
        try await rig.clock.waitForSleeper()
        await rig.clock.advance(by: .seconds(10))
        let failed = await waitForEvent(events, isFailure)
        #expect(failed == .watchdog(.failed(version: "1.3.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.1.0"))))
        await updater.shutdown()
    }

    @Test func theControlHandlerPassesThePagesVersion() async throws {
        let rig = try LifecycleRig()
        let updater = rig.makeUpdater()
        try await updater.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        try await rig.publishAndSwitch("1.1.0", on: updater)
        let control = UpdaterControl(updater)
        await #expect(throws: UpdaterError.self) { try await control.startupDidComplete(version: "0.9.0") }
        #expect(try await control.status().inTrial)
        let status = try await control.startupDidComplete(version: "1.1.0")
        #expect(status.lastKnownGood == "1.1.0" && !status.inTrial)
        await updater.shutdown()
    }

    // MARK: one writer while an agent runs

    @Test func oneShotWritersAreRefusedWhileAnAgentRuns() async throws {
        let rig = try LifecycleRig()
        let agent = rig.makeUpdater()
        try await agent.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        try await rig.publishAndSwitch("1.1.0", on: agent)
        try await agent.startupDidComplete()
        rig.channel.publish("1.2.0")
        try await agent.checkForUpdates()
        await agent.recordControlAddress("http://127.0.0.1:12345/__clientctl/")
        let stateBefore = try Data(contentsOf: URL(fileURLWithPath: rig.layout.state))

        let other = rig.makeUpdater()  // what `clientctl reload/ack/rollback/gc` build
        let attempts: [(String, @Sendable () async throws -> Void)] = [
            ("reload", { _ = try await other.reload() }),
            ("ack", { _ = try await other.startupDidComplete() }),
            ("rollback", { _ = try await other.rollback() }),
            ("gc", { _ = try await other.collectGarbage() }),
        ]
        for (name, attempt) in attempts {
            let error = await #expect(throws: UpdaterError.self, "\(name)") { try await attempt() }
            #expect(error?.kind == .tempFail, "\(name)")
            #expect(
                error?.message.contains("clientctl serve (pid \(getpid()), control endpoints http://127.0.0.1:12345/__clientctl/)") == true,
                "\(name): \(String(describing: error))")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.layout.state)) == stateBefore, "state.json untouched")
        // A second agent is refused as well.
        await #expect(throws: UpdaterError.self) { try await rig.makeUpdater().start(bridge: nil, lockWait: .zero) }
        // The agent itself still writes; an update check from elsewhere stays allowed.
        rig.channel.publish("1.3.0")
        #expect(try await other.install().pending == "1.3.0")
        try await agent.reload()
        #expect(rig.state.current == "1.3.0")

        await agent.shutdown()
        #expect(!FileManager.default.fileExists(atPath: rig.layout.root + "/agent.json"))
        let report = try await other.rollback()
        #expect(report.current == .installed("1.1.0") && report.blacklist == ["1.3.0"], "once the agent is gone, one-shot commands write again")
    }

    // MARK: one update check

    /// After a failed trial, every entry point of the update check stages the retry.
    @Test(arguments: ["install", "checkForUpdates", "control"])
    func everyCheckRestagesTheRetryVersion(entry: String) async throws {
        let rig = try LifecycleRig()
        let agent = rig.makeUpdater()
        try await agent.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        try await rig.publishAndSwitch("1.1.0", on: agent)
        try await agent.startupDidComplete()
        try await rig.publishAndSwitch("1.2.0", on: agent)
        let events = agent.events()
        try await rig.clock.waitForSleeper()
        await rig.clock.advance(by: .seconds(10))
        _ = await waitForEvent(events, isFailure)
        #expect(rig.state.retry == ["1.2.0"] && rig.state.current == "1.1.0" && rig.state.pending == nil)

        let report: InstallReport?
        switch entry {
        case "install": report = try await rig.makeUpdater().install()  // `clientctl install` (cron) beside the agent
        case "checkForUpdates": report = try await agent.checkForUpdates()  // serve's timer
        default:
            _ = try await UpdaterControl(agent).checkForUpdates(version: "1.1.0")  // the page's checkForUpdates
            report = nil
        }
        if let report {
            #expect(report.result == .staged && report.version == "1.2.0" && report.pending == "1.2.0")
            #expect(report.message.contains("staged 1.2.0 again"), "\(report.message)")
        }
        #expect(rig.state.pending == "1.2.0")
        #expect(LastCheck.read(rig.layout)?.result == "staged")
        await agent.shutdown()
    }
}

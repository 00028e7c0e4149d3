import ClientUpdater
import Foundation
import TestSupport
import Testing

/// `clientctl serve` killed with SIGKILL in the middle of a trial, then started again.
@Suite(.serialized) struct ServeCrashTests {
    @Test func sigkillDuringTrialRevertsAndRecordsTheFailureAtTheNextStart() async throws {
        let rig = try await ReleaseRig(startupTimeout: 600, label: "crash")  // the kill ends the trial, never its timeout
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        var serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        await #expect(try serve.control("startup-complete").status == 200)
        await #expect(try rig.status().lastKnownGood == "1.0.0")

        try await rig.publish("1.1.0", script: ReleaseRig.acknowledging)
        // A check that fails is an event, not a failed request: on a starved machine the
        // first may time out, so check until 1.1.0 is pending (what is under test is the kill).
        for _ in 0..<3 where try await rig.status().pending != "1.1.0" {
            await #expect(try serve.control("check").status == 200)
        }
        #expect(try await rig.status().pending == "1.1.0")
        await #expect(try serve.control("switch-to-pending").status == 200)
        var status = try await rig.status()
        #expect(status.current == .installed("1.1.0") && status.trial?.version == "1.1.0" && status.trial?.pid == serve.pid)
        await #expect(try serve.get("/").body.contains("<p id=\"version\">1.1.0</p>"))

        #expect(serve.stop(SIGKILL) == 128 + SIGKILL)
        status = try await rig.status()
        #expect(status.trial?.version == "1.1.0", "a killed process leaves its trial behind")

        serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        status = try await rig.status()
        #expect(status.current == .installed("1.0.0") && status.trial == nil)
        #expect(status.retry == ["1.1.0"] && status.blacklist.isEmpty && status.lastKnownGood == "1.0.0")
        await #expect(try serve.get("/").body.contains("<p id=\"version\">1.0.0</p>"))
        #expect(serve.stderr.contains("1.1.0 was on trial when its process died"), "\(serve.stderr)")
        #expect(serve.stop(SIGTERM) == 0)
    }

    @Test func oneShotCommandsReloadAckRollbackGc() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "oneshot")
        try await rig.publish("1.0.0", script: "")
        try await rig.run(["install", "--root", rig.root])
        let reload = try await rig.run(["reload", "--root", rig.root])
        #expect(reload.output == rig.root + "/serving/1.0.0\n")
        await #expect(try rig.status().trial?.version == "1.0.0")
        let ack = try await rig.run(["ack", "--root", rig.root, "--json"])
        let report = try JSONDecoder().decode(LifecycleReport.self, from: ack.stdout)
        #expect(report.lastKnownGood == "1.0.0" && report.trial == nil)

        try await rig.publish("1.1.0", script: "")
        try await rig.run(["install", "--root", rig.root])
        try await rig.run(["reload", "--root", rig.root])
        let rollback = try await rig.run(["rollback", "--root", rig.root])
        #expect(rollback.output == rig.root + "/serving/1.0.0\n")
        let status = try await rig.status()
        #expect(status.current == .installed("1.0.0") && status.blacklist == ["1.1.0"])
        let nothing = try await ClientctlBinary.run(["reload", "--root", rig.root])
        #expect(nothing.status == 66 && nothing.errorOutput.contains("no pending version"))
        let gc = try await rig.run(["gc", "--root", rig.root, "--json"])
        #expect(try JSONDecoder().decode(LifecycleReport.self, from: gc.stdout).removed.isEmpty, "keep 3: nothing to remove")
    }
}

import ClientUpdater
import Foundation
import TestSupport
import Testing

/// `clientctl serve` killed with SIGKILL in the middle of a trial, then started again.
@Suite(.serialized) struct ServeCrashTests {
    @Test func sigkillDuringTrialRevertsAndRecordsTheFailureAtTheNextStart() throws {
        let rig = try ReleaseRig(startupTimeout: 60, label: "crash")
        try rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try rig.run(["install", "--root", rig.root])
        var serve = try ServeProcess(root: rig.root, scratch: rig.tmp.path)
        #expect(try serve.control("startup-complete").status == 200)
        #expect(try rig.status().lastKnownGood == "1.0.0")

        try rig.publish("1.1.0", script: ReleaseRig.acknowledging)
        #expect(try serve.control("check").status == 200)
        #expect(try serve.control("switch-to-pending").status == 200)
        var status = try rig.status()
        #expect(status.current == "1.1.0" && status.trial?.version == "1.1.0" && status.trial?.pid == serve.pid)
        #expect(try serve.get("/").body.contains("<p id=\"version\">1.1.0</p>"))

        #expect(serve.stop(SIGKILL) == 128 + SIGKILL)
        status = try rig.status()
        #expect(status.trial?.version == "1.1.0", "a killed process leaves its trial behind")

        serve = try ServeProcess(root: rig.root, scratch: rig.tmp.path)
        status = try rig.status()
        #expect(status.current == "1.0.0" && status.trial == nil)
        #expect(status.retry == ["1.1.0"] && status.blacklist.isEmpty && status.lastKnownGood == "1.0.0")
        #expect(try serve.get("/").body.contains("<p id=\"version\">1.0.0</p>"))
        #expect(serve.stderr.contains("1.1.0 was on trial when its process died"), "\(serve.stderr)")
        #expect(serve.stop(SIGTERM) == 0)
    }

    @Test func oneShotCommandsReloadAckRollbackGc() throws {
        let rig = try ReleaseRig(startupTimeout: 30, label: "oneshot")
        try rig.publish("1.0.0", script: "")
        try rig.run(["install", "--root", rig.root])
        let reload = try rig.run(["reload", "--root", rig.root])
        #expect(reload.output == rig.root + "/serving/1.0.0\n")
        #expect(try rig.status().trial?.version == "1.0.0")
        let ack = try rig.run(["ack", "--root", rig.root, "--json"])
        let report = try JSONDecoder().decode(LifecycleReport.self, from: ack.stdout)
        #expect(report.lastKnownGood == "1.0.0" && report.trial == nil)

        try rig.publish("1.1.0", script: "")
        try rig.run(["install", "--root", rig.root])
        try rig.run(["reload", "--root", rig.root])
        let rollback = try rig.run(["rollback", "--root", rig.root])
        #expect(rollback.output == rig.root + "/serving/1.0.0\n")
        let status = try rig.status()
        #expect(status.current == "1.0.0" && status.blacklist == ["1.1.0"])
        let nothing = try ClientctlBinary.run(["reload", "--root", rig.root])
        #expect(nothing.status == ExitStatus.noInput.rawValue && nothing.errorOutput.contains("no pending version"))
        let gc = try rig.run(["gc", "--root", rig.root, "--json"])
        #expect(try JSONDecoder().decode(LifecycleReport.self, from: gc.stdout).removed.isEmpty, "keep 3: nothing to remove")
    }
}

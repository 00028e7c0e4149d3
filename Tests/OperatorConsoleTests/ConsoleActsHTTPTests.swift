import ArchivePublishing
import AuditTrail
import ClientUpdater
import FleetReports
import Foundation
import SignedManifest
import TestSupport
import Testing

/// The acts over HTTP on 127.0.0.1: what each leaves on disk, what the device does next,
/// and what the audit trail says.
@Suite(.serialized) struct ConsoleActsHTTPTests {
    /// Halt signs a paused restriction with the rollout key and the device's next check
    /// refuses the release; lift takes the halt away (the file goes: nothing else was held
    /// back) and the device takes the release. Both in the trail, before → after, and the
    /// lift says whose halt it was.
    @Test func haltThenLiftAsTheDeviceSeesIt() async throws {
        let rig = try await ConsoleRig()
        let alice = try await rig.login()
        var (csrf, basis, _) = try await rig.actFields(cookie: alice)
        #expect(basis == "none")
        let halted = try await rig.post(
            "/act/halt", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(halted.status == 303 && halted["location"] == "/channel/stable?done=halt", "\(halted.status) \(halted.body)")
        let restriction = try #require(try rig.restriction())
        let guardKey = try Ed25519.PrivateKey(pemFile: rig.guardKeyPath)
        #expect(restriction.paused && restriction.version.description == "1.1.0" && restriction.percent == nil)
        #expect(restriction.signatures.map(\.keyId) == [guardKey.publicKey.keyId])
        let refused = try await rig.d.updater().install()
        #expect(refused.result == .skipped && refused.message.contains("paused by the rollout role's restriction"), "\(refused)")

        let page = try await rig.get("/channel/stable?done=halt", cookie: alice).body
        #expect(page.contains("id=\"notice\">Halted:") && page.contains("class=\"halted\""))
        #expect(page.contains("data-act=\"lift\" data-channel=\"stable\" data-version=\"1.1.0\"") && !page.contains("data-act=\"halt\""))
        (csrf, basis, _) = try await rig.actFields(cookie: alice)
        #expect(basis.count == 64)
        // A second halt of what is halted already is refused, and says so.
        let again = try await rig.post(
            "/act/halt", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(again.status == 409 && again.body.contains("halted already"), "\(again.status)")

        let lifted = try await rig.post(
            "/act/lift", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(lifted.status == 303, "\(lifted.body)")
        #expect(try rig.restriction() == nil)
        let taken = try await rig.d.updater().install()
        #expect(taken.result == .installed && taken.version == "1.1.0", "\(taken)")

        let acts = try rig.trail().filter { $0.act != "login" }
        #expect(acts.map(\.act) == ["halt", "halt", "lift"])
        #expect(acts[0].result == "ok" && acts[0].target == "stable 1.1.0" && acts[0].before == "1.1.0 100 %")
        #expect(acts[0].after.hasPrefix("1.1.0 100 % halted until "), "\(acts[0].after)")
        #expect(acts[1].result.hasPrefix("refused: ") && acts[1].result.contains("halted already"))
        #expect(acts[2].result == "ok" && acts[2].before.contains("(halted by alice (halt, trail entry 2))"), "\(acts[2].before)")
        #expect(acts[2].after == "1.1.0 100 % (restriction.json removed)", "\(acts[2].after)")
        // The trail's page: newest first, each field escaped text.
        let audit = try await rig.get("/audit", cookie: alice).body
        let seqs = audit.components(separatedBy: "<tr data-seq=\"").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        let entries = try rig.trail().count
        #expect(seqs == Array((1...entries).reversed()), "\(seqs)")
        #expect(audit.contains("<td data-field=\"act\">lift</td>"))
        await rig.stop()
    }

    /// A cap lowers the percent in force and never raises it; a lift keeps a cap that was
    /// there before the halt; an act made from a page that is out of date is refused.
    @Test func capLowersOnlyAndLiftKeepsTheCap() async throws {
        let rig = try await ConsoleRig()
        let alice = try await rig.login()
        var (csrf, basis, _) = try await rig.actFields(cookie: alice)
        let stale = basis
        let cap = try await rig.post(
            "/act/cap", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis), ("percent", "20")], cookie: alice)
        #expect(cap.status == 303, "\(cap.body)")
        #expect(try rig.restriction()?.percent == 20 && rig.restriction()?.paused == false)
        (csrf, basis, _) = try await rig.actFields(cookie: alice)
        let higher = try await rig.post(
            "/act/cap", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis), ("percent", "50")], cookie: alice)
        #expect(higher.status == 409 && higher.body.contains("below the 20 % in force"), "\(higher.status)")
        let outOfDate = try await rig.post(
            "/act/halt", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", stale)], cookie: alice)
        #expect(outOfDate.status == 409 && outOfDate.body.contains("changed since it was read"), "\(outOfDate.status)")
        let otherRelease = try await rig.post(
            "/act/halt", [("csrf", csrf), ("channel", "stable"), ("version", "1.0.0"), ("basis", basis)], cookie: alice)
        #expect(otherRelease.status == 409 && otherRelease.body.contains("is now 1.1.0, not 1.0.0"))
        #expect(try rig.restriction()?.paused == false)

        let halt = try await rig.post(
            "/act/halt", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(halt.status == 303)
        #expect(try rig.restriction()?.paused == true && rig.restriction()?.percent == 20)
        (csrf, basis, _) = try await rig.actFields(cookie: alice)
        let lift = try await rig.post(
            "/act/lift", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(lift.status == 303)
        let kept = try #require(try rig.restriction())
        #expect(!kept.paused && kept.percent == 20)
        let trail = try rig.trail().filter { $0.act != "login" }
        #expect(trail.map(\.act) == ["cap", "cap", "halt", "halt", "halt", "lift"])
        #expect(trail.map { $0.result == "ok" } == [true, false, false, false, true, true])
        #expect(trail[5].after.hasSuffix("(the other limits kept)"), "\(trail[5].after)")
        await rig.stop()
    }

    /// A pending device is listed with its labels and its reports held; admit through the
    /// console brings its reports in, and the message it kept (`<script>…`) is shown as
    /// text; reject shuts another out. Both in the trail.
    @Test func admitAndRejectPendingDevicesWithHostileMessagesEscaped() async throws {
        let rig = try await ConsoleRig()
        let alice = try await rig.login()
        let hostile = "<script>alert(1)</script><img src=x>"
        let now = Date()
        var report = FleetReport(seq: 1, time: now.addingTimeInterval(-60), type: .pageErrors, running: "1.0.0")
        report.version = "1.0.0"
        report.count = 3
        report.ms = 3_600_000
        report.detail = hostile
        let a = try ConsoleRig.Device(0xA1)
        let b = try ConsoleRig.Device(0xB2)
        try await a.send([report], labels: ["site": "lobby", "ring": "beta"], to: rig.collector)
        try await b.send([FleetReport(seq: 1, time: now, type: .heartbeat, running: "1.0.0")], to: rig.collector)

        let overview = try await rig.get("/", cookie: alice).body
        #expect(overview.contains("<span data-field=\"pending\">2</span> devices wait for admission"), "\(overview)")
        let devices = try await rig.get("/devices", cookie: alice).body
        #expect(devices.contains("<tr data-device=\"\(a.id)\">") && devices.contains("ring=beta site=lobby"), "\(devices)")
        let csrf = ConsoleRig.field("csrf", in: devices) ?? ""
        #expect(devices.contains("data-act=\"admit\" data-device=\"\(a.id)\"") && devices.contains("data-act=\"reject\" data-device=\"\(b.id)\""))
        let admitted = try await rig.post("/act/admit", [("csrf", csrf), ("device", a.id)], cookie: alice)
        #expect(admitted.status == 303 && admitted["location"] == "/devices?done=admit", "\(admitted.body)")
        let rejected = try await rig.post("/act/reject", [("csrf", csrf), ("device", b.id)], cookie: alice)
        #expect(rejected.status == 303)
        let notAnID = try await rig.post("/act/admit", [("csrf", csrf), ("device", "<b>")], cookie: alice)
        #expect(notAnID.status == 400)
        let after = try await rig.get("/devices", cookie: alice).body
        #expect(after.contains("id=\"no-pending\""))

        let channel = try await rig.get("/channel/stable", cookie: alice).body
        #expect(!channel.contains(hostile) && !channel.contains("<script"))
        #expect(channel.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x&gt;"), "\(channel)")
        let trail = try rig.trail().filter { $0.act != "login" }
        #expect(trail.map(\.act) == ["admit", "reject", "admit"])
        #expect(trail[0].target == a.id && trail[0].before == "pending" && trail[0].after == "accepted" && trail[0].result == "ok")
        #expect(trail[1].after == "rejected" && trail[2].result == "refused: not a device id")
        await rig.stop()
    }

    /// With `--push`, each act pushes the channel: the store offers the halt, then, after
    /// the lift, a restriction that holds nothing more (a push deletes nothing, so the
    /// halt's file must be replaced, not left behind).
    @Test func withPushTheStoreFollowsEachAct() async throws {
        let rig = try await ConsoleRig(push: true)
        let (s3, area) = try #require(rig.store)
        let alice = try await rig.login()
        var (csrf, basis, _) = try await rig.actFields(cookie: alice)
        let halt = try await rig.post(
            "/act/halt", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(halt.status == 303, "\(halt.body)")
        let pushed = try await s3.get("\(area)/stable/restriction.json")
        #expect(pushed.status == 200 && (try? Restriction.parse(pushed.body, source: "store").paused) == true)
        #expect(try await s3.get("\(area)/stable/manifest.json").status == 200)
        (csrf, basis, _) = try await rig.actFields(cookie: alice)
        let lift = try await rig.post(
            "/act/lift", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(lift.status == 303, "\(lift.body)")
        let after = try Restriction.parse(try await s3.get("\(area)/stable/restriction.json").body, source: "store")
        #expect(!after.paused && after.percent == 100 && after.revoked.isEmpty)
        let local = try #require(try rig.restriction())
        #expect(local == after)
        #expect(try rig.trail().last?.after.hasSuffix("(restriction.json holds nothing more)") == true)
        await rig.stop()
    }

    /// A halt the console did not make (the guard's, or `rollout restrict --pause` without a
    /// trail) is lifted the same way; the trail says what the halt was: when and by which
    /// rollout key it was signed.
    @Test func aHaltMadeElsewhereIsLiftedAndTheTrailSaysWhoseItWas() async throws {
        let rig = try await ConsoleRig()
        let guardKey = try Ed25519.PrivateKey(pemFile: rig.guardKeyPath)
        try await ChannelRestrictor.restrict(
            RestrictionRequest(pause: true), releases: rig.d.releases.path, channel: "stable", signers: [guardKey],
            now: Date(timeIntervalSince1970: floor(Date().timeIntervalSince1970)))
        let alice = try await rig.login()
        let (csrf, basis, page) = try await rig.actFields(cookie: alice)
        #expect(page.contains("data-act=\"lift\" data-channel=\"stable\""))
        let lift = try await rig.post(
            "/act/lift", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(lift.status == 303, "\(lift.body)")
        #expect(try rig.restriction() == nil)
        let entry = try #require(try rig.trail().last)
        #expect(entry.act == "lift" && entry.result == "ok")
        #expect(
            entry.before.contains("(halted by no one the trail names: the restriction was signed at ")
                && entry.before.contains("by rollout key \(guardKey.publicKey.keyId))"), "\(entry.before)")
        await rig.stop()
    }

    /// A halt that `rollout restrict --pause --audit` recorded on the same trail: the lift's
    /// entry names who made it, from the trail.
    @Test func aHaltOnTheTrailIsLiftedAndTheLiftNamesWhoHalted() async throws {
        let rig = try await ConsoleRig()
        try await ConsoleRig.clientctl([
            "rollout", "restrict", "stable", "--out", rig.d.releases.path, "--key", rig.guardKeyPath, "--pause", "--audit", rig.audit,
            "--audit-operator", "bob",
        ])
        let alice = try await rig.login()
        let (csrf, basis, _) = try await rig.actFields(cookie: alice)
        let lift = try await rig.post(
            "/act/lift", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(lift.status == 303, "\(lift.body)")
        let entry = try #require(try rig.trail().last)
        #expect(entry.act == "lift" && entry.before.hasSuffix("(halted by bob (rollout-restrict, trail entry 1))"), "\(entry.before)")
        await rig.stop()
    }

    /// A trail whose last line is cut refuses every act before anything is signed: an act
    /// no one could read about later is not done.
    @Test func aBrokenTrailRefusesTheActBeforeAnythingIsSigned() async throws {
        let rig = try await ConsoleRig()
        let alice = try await rig.login()
        let (csrf, basis, _) = try await rig.actFields(cookie: alice)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: rig.audit))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"seq\":9,".utf8))
        try handle.close()
        let before = try TreeSnapshot(rig.d.releases.path)
        let halt = try await rig.post(
            "/act/halt", [("csrf", csrf), ("channel", "stable"), ("version", "1.1.0"), ("basis", basis)], cookie: alice)
        #expect(halt.status == 503 && halt.body.contains("the audit trail cannot be extended, so nothing was done"), "\(halt.body)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        await rig.stop()
    }
}

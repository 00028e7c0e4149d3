import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// Issue 65, the release side: acts that would change more than they seem to are refused
/// with one line and their own exit status, nothing written, unless a flag names them
/// (docs/guides/releasing.md#acts-that-need-a-flag). Each runs the built `clientctl` on a
/// release folder in a temporary directory.
@Suite struct EditRefusalTests {
    static let sample = ClientctlBinary.packagePath("Fixtures/sample-client")

    /// `clientctl ARGS` under `faketime` when `wall` is given (`@YYYY-MM-DD hh:mm:ss`).
    static func run(_ args: [String], wall: String? = nil) async throws -> Subprocess.Result {
        guard let wall else { return try await ClientctlBinary.run(args) }
        return try await Subprocess.run(
            "faketime", ["-f", wall, ClientctlBinary.path] + args, environment: ["FAKETIME_DONT_FAKE_MONOTONIC": "1"])
    }

    static func publish(_ out: String, _ version: String, _ extra: [String] = [], wall: String? = nil) async throws -> Subprocess.Result {
        try await run(
            [
                "publish", sample, "--app", "com.example.notes", "--channel", "stable", "--version", version, "--min-shell", "1.0.0",
                "--key", ClientctlBinary.packagePath("Keys/test-signing.pem"), "--out", out,
            ] + extra, wall: wall)
    }

    /// Two cohorts halted by the rollout role (the restriction `rollout guard --label`
    /// signs for store 12 and store 14); `cohort set` adds one id to the pilot cohort the
    /// release names. Re-signing would lift both halts: refused, exit 77, the folder
    /// (the cohort's list included) as it was. With `--lift-halt` it re-signs.
    @Test func aCohortEditRefusesToLiftTheGuardsHalts() async throws {
        let rig = try await RestrictionRig()
        let out = rig.d.releases.path
        let key = rig.releasePEM
        let ids = CohortTargetingTests.otherIds(3, except: [])
        let list = rig.d.tmp("pilot.txt")
        try Data(ids.prefix(2).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: list))
        try await RestrictionRig.clientctl(["cohort", "set", "stable", "pilot", "--ids", list, "--out", out, "--key", key])
        let published = try await Self.publish(out, "1.1.0", ["--target", "id in cohort pilot or store in (12, 14)"])
        #expect(published.status == 0, "\(published.errorOutput)")
        try await rig.restrict(["--target", "not store = 12 and not store = 14"])

        try Data(ids.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: list))
        let before = try TreeSnapshot(out)
        let refused = try await RestrictionRig.clientctl(
            ["cohort", "set", "stable", "pilot", "--ids", list, "--out", out, "--key", key], expect: 77)
        #expect(refused.errorOutput.split(separator: "\n").count == 1, "\(refused.errorOutput)")
        #expect(
            refused.errorOutput.contains(
                "/stable/restriction.json narrows it to 'not store = 12 and not store = 14' (release 1.1.0, until "),
            "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("cohort set re-signs the manifest and would lift that halt; give --lift-halt"))
        #expect(try TreeSnapshot(out) == before, "nothing written, the cohort's list neither")

        let lifted = try await RestrictionRig.clientctl([
            "cohort", "set", "stable", "pilot", "--ids", list, "--out", out, "--key", key, "--lift-halt",
        ])
        #expect(lifted.output.contains("re-signed to name it"), "\(lifted.output)")
        #expect(try rig.manifest().cohort(named: "pilot")?.count == 3)
    }

    /// A pin no device can follow: to a version the channel's release revokes (exit 65,
    /// no override), to an expired release (exit 77 unless `--allow-expired`).
    @Test func aPinToARevokedOrExpiredReleaseIsRefused() async throws {
        let tmp = try TemporaryDirectory("pin-refusals")
        let out = tmp("rel")
        let lastWeek = DeviceTimeTests.at(Date().addingTimeInterval(-7 * 86_400))
        #expect(try await Self.publish(out, "1.0.0", ["--expires", "1d"], wall: lastWeek).status == 0)
        #expect(try await Self.publish(out, "1.1.0").status == 0)
        #expect(try await Self.publish(out, "1.2.0", ["--revoke", "1.1.0"]).status == 0)
        let key = ClientctlBinary.packagePath("Keys/test-signing.pem")
        let pin = ["rollout", "pin", "stable", "--out", out, "--key", key, "--target", "site = lobby", "--version"]
        let before = try TreeSnapshot(out)

        let revoked = try await Self.run(pin + ["1.1.0"])
        #expect(revoked.status == 65, "\(revoked.errorOutput)")
        #expect(
            revoked.errorOutput.contains(
                "release 1.1.0 is revoked by the channel's release 1.2.0: devices never take it, so the devices of 'site = lobby' would take no release at all"
            ), "\(revoked.errorOutput)")
        let expired = try await Self.run(pin + ["1.0.0"])
        #expect(expired.status == 77, "\(expired.errorOutput)")
        #expect(expired.errorOutput.contains("release 1.0.0 expired at "), "\(expired.errorOutput)")
        #expect(expired.errorOutput.contains("give --allow-expired to hold them so, nothing was changed"), "\(expired.errorOutput)")
        #expect(try TreeSnapshot(out) == before)

        let held = try await Self.run(pin + ["1.0.0", "--allow-expired"])
        #expect(held.status == 0 && held.output.contains("pinned to 1.0.0: site = lobby"), "\(held.output) \(held.errorOutput)")
        // Nor may a revocation leave the pinned devices on nothing, by `revoke` or by `publish --revoke`.
        let pinned = try TreeSnapshot(out)
        let revoke = try await Self.run(["revoke", "stable", "1.0.0", "--out", out, "--key", key])
        #expect(revoke.status == 65, "\(revoke.errorOutput)")
        #expect(revoke.errorOutput.contains("release 1.0.0 holds the devices of 'site = lobby' by a pin: revoked, it would leave them"))
        #expect(try await Self.publish(out, "1.3.0", ["--revoke", "1.0.0"]).status == 65)
        #expect(try TreeSnapshot(out) == pinned)
    }

    /// A release machine whose clock reads 2099: `publish` and a re-signing refuse to stamp
    /// a time so far beyond the channel's newest (exit 77, nothing written), unless
    /// `--allow-far-future` says the clock is right.
    @Test func aClockFarAheadOfTheChannelIsRefusedWithoutAFlag() async throws {
        let tmp = try TemporaryDirectory("far-future")
        let out = tmp("rel")
        #expect(try await Self.publish(out, "1.0.0").status == 0)
        let before = try TreeSnapshot(out)
        let in2099 = "@2099-06-01 00:00:00"
        let refused = try await Self.publish(out, "1.1.0", wall: in2099)
        #expect(refused.status == 77, "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("this machine's clock reads 2099-06-01T00:00:"), "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("days after channel stable's newest release (published "), "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("check the clock, or give --allow-far-future, nothing was changed"), "\(refused.errorOutput)")
        let key = ClientctlBinary.packagePath("Keys/test-signing.pem")
        let edit = try await Self.run(["rollout", "set", "stable", "--out", out, "--key", key, "--percent", "50"], wall: in2099)
        #expect(edit.status == 77 && edit.errorOutput.contains("--allow-far-future"), "\(edit.errorOutput)")
        #expect(try TreeSnapshot(out) == before)

        let allowed = try await Self.publish(out, "1.1.0", ["--allow-far-future"], wall: in2099)
        #expect(allowed.status == 0, "\(allowed.errorOutput)")
    }

    /// A release published right after a re-signing of the channel (which stamps the second
    /// after its own, here half a minute ahead of this machine) is stamped after it: else
    /// devices that took the re-signing would refuse the new release as a replay.
    @Test func aReleasePublishedRightAfterAResigningIsNoReplay() async throws {
        let tmp = try TemporaryDirectory("publish-order")
        let out = tmp("rel")
        #expect(try await Self.publish(out, "1.0.0", ["--rollout", "10"]).status == 0)
        let key = ClientctlBinary.packagePath("Keys/test-signing.pem")
        let ahead = DeviceTimeTests.at(Date().addingTimeInterval(30))
        let edit = try await Self.run(["rollout", "set", "stable", "--out", out, "--key", key, "--percent", "50"], wall: ahead)
        #expect(edit.status == 0, "\(edit.errorOutput)")
        let resigned = try ReleaseIndex.parse(Data(contentsOf: URL(fileURLWithPath: out + "/stable/index.json"))).releases
        let times = resigned.compactMap { $0["published"]?.stringValue.flatMap(RFC3339.parse) }
        let before = try #require(times.max())
        #expect(try await Self.publish(out, "1.1.0").status == 0)
        let manifest = try Manifest.validate(
            StrictJSON.parseObject(Data(contentsOf: URL(fileURLWithPath: out + "/stable/manifest.json")), limits: .manifest)
        ).get()
        #expect(manifest.version == Version(1, 1, 0) && manifest.published > before, "\(manifest.published) \(before)")
    }
}

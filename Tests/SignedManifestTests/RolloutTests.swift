import ClientFoundation
import ClientUpdater
import Foundation
import SignedArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// Staged rollouts, revocation and replay as pure rules: the `rollout` field's forms and
/// refusals, the percent in force over time, the device's place in line, and what a
/// verified manifest does to a device's state.
@Suite struct RolloutTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func read(_ json: String) throws -> Rollout {
        let object = try StrictJSON.parseObject(Array("{\"rollout\": \(json)}".utf8))
        return try Rollout.parse(object["rollout"] ?? .null)
    }

    @Test func aScheduleFollowsItsStepsAndAPlainPercentHoldsAtOnce() throws {
        let schedule = try Self.read(#"{"start": "2027-01-15T08:00:00Z", "steps": [[0, 5], [86400, 25], [172800, 100]]}"#)
        let start = try #require(RFC3339.parse("2027-01-15T08:00:00Z"))
        #expect(schedule.percent(at: start.addingTimeInterval(-1)) == 0)
        #expect(schedule.percent(at: start) == 5)
        #expect(schedule.percent(at: start.addingTimeInterval(86_399)) == 5)
        #expect(schedule.percent(at: start.addingTimeInterval(86_400)) == 25)
        #expect(schedule.percent(at: start.addingTimeInterval(400_000)) == 100)
        #expect(try Self.read("25").percent(at: start) == 25)
        #expect(try Self.read(#"{"percent": 12.5, "paused": true}"#) == .percent(12.5, paused: true))
        #expect(Rollout.percent(25).jsonValue == .integer(25), "a plain percent is written as one")
    }

    static let refusals: [(String, String)] = [
        ("-1", "percent -1.0 is not between 0 and 100"),
        ("101", "percent 101.0 is not between 0 and 100"),
        (#""half""#, "must be a percent or an object, got string"),
        (#"{"percent": 5, "when": 1}"#, "has an unknown member 'when'"),
        (#"{"steps": [[0, 5]]}"#, "needs 'start', an RFC 3339 UTC time, with 'steps'"),
        (#"{"start": "2027-01-15T08:00:00Z", "steps": [[0, 50], [10, 20]]}"#, "steps must go forward in time and never lower the percent"),
        (#"{"start": "2027-01-15T08:00:00Z", "steps": [[-5, 20]]}"#, "pairs with seconds ≥ 0"),
        (#"{"percent": 5, "paused": "yes"}"#, "member 'paused' must be true or false"),
        (#"{"paused": true}"#, "needs either 'percent' or 'start' and 'steps'"),
    ]

    @Test(arguments: refusals)
    func aMalformedRolloutIsRefusedNamingIt(json: String, expected: String) {
        #expect {
            try Self.read(json)
        } throws: { ($0 as? ManifestRejection)?.field == "rollout" && ($0 as? ManifestRejection)?.message.contains(expected) == true }
    }

    /// The place in line is SHA-256("rollout" ‖ channel ‖ version ‖ deviceId) mod 10000:
    /// the same number Python's hashlib and big integers give.
    @Test func thePlaceInLineIsTheDigestModTenThousand() throws {
        let id = "00112233445566778899aabbccddeeff"
        let script = "import hashlib; print(int(hashlib.sha256(b'rolloutstable1.2.0\(id)').hexdigest(), 16) % 10000)"
        let python = try Subprocess.run("python3", ["-c", script])
        #expect(python.status == 0, "\(python.errorOutput)")
        #expect(
            Int(python.output.trimmingCharacters(in: .whitespacesAndNewlines)) == Rollout.bucket(channel: "stable", version: "1.2.0", deviceId: id))
    }

    /// Buckets spread devices evenly and change with the release.
    @Test func devicesAreSpreadEvenlyAndADifferentSubsetGoesFirstForEachRelease() {
        let ids = (0..<10_000).map { String(format: "%032x", $0 &* 2_654_435_761) }
        let first = ids.filter { Rollout.bucket(channel: "stable", version: "1.2.0", deviceId: $0) < 2_500 }
        let second = Set(ids.filter { Rollout.bucket(channel: "stable", version: "1.3.0", deviceId: $0) < 2_500 })
        #expect(abs(first.count - 2_500) < 200, "25 % ± 2 points: \(first.count) of 10000")
        let overlap = first.filter(second.contains).count
        #expect(abs(overlap - 625) < 150, "the next release picks an independent quarter: \(overlap) in both")
        #expect(
            Rollout.bucket(channel: "stable", version: "1.2.0", deviceId: ids[0])
                == Rollout.bucket(channel: "stable", version: "1.2.0", deviceId: ids[0]))
    }

    @Test func revocationsBlacklistAndDropPendingAndLastKnownGood() {
        var state = DeviceState()
        state.current = "1.1.0"
        state.pending = "1.2.0"
        state.lastKnownGood = "1.1.0"
        state.retry = ["1.2.0"]
        let newly = FeedRules.applyRevocations([Version(1, 1, 0), Version(1, 2, 0)], to: &state)
        #expect(newly == ["1.1.0", "1.2.0"])
        #expect(state.blacklist == ["1.1.0", "1.2.0"] && state.retry.isEmpty && state.pending == nil && state.lastKnownGood == nil)
        #expect(state.current == "1.1.0", "the updater switches away, not the rule")
        #expect(FeedRules.applyRevocations([Version(1, 1, 0)], to: &state).isEmpty, "already revoked: nothing new")
    }
}

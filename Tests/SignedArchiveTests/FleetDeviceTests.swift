import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import SignedArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// Staged rollouts, pauses, replays and revocations as a device sees them, through a real
/// release folder on a loopback server and the library updater with an injected clock.
@Suite struct FleetDeviceTests {
    static func rollout(_ json: String) -> (inout JSONObject) -> Void {
        { object in
            if let value = try? StrictJSON.parse(Array(json.utf8)) { object["rollout"] = value }
        }
    }

    @Test func aRolloutAdmitsDevicesByTheirPlaceAndAPauseStopsNewInstalls() async throws {
        let d = try DeviceFixture()
        let id = try #require(DeviceIdFile.read(d.layout)?.text, "init gave the root a device id")
        let place = Rollout.bucket(channel: "stable", version: "1.0.0", deviceId: id)
        // A percent just below this device's place: not yet; the operator can override.
        try d.publish("1.0.0", edit: Self.rollout(String(format: "%.2f", Double(place) / 100)))
        let waiting = try await d.updater().install()
        #expect(waiting.result == .skipped)
        #expect(waiting.message.hasSuffix("this device (place \(place) of 10000) waits"), "\(waiting.message)")
        #expect(try await d.updater().status().installed.isEmpty)
        let channel = try ArchiveChannel(
            layout: d.layout, config: d.config, downloader: Downloader(transport: DefaultTransport(config: d.config, root: d.layout.root)),
            options: .init(ignoreRollout: true), logger: .quiet)
        #expect(try await Updater(layout: d.layout, config: d.config, channel: channel, logger: .quiet).install().version == "1.0.0")

        // A schedule: nobody in the first hour, everybody after it.
        let start = Date()
        try d.publish("1.1.0", edit: Self.rollout(#"{"start": "\#(RFC3339.format(start))", "steps": [[0, 0], [3600, 100]]}"#))
        #expect(try await d.updater(now: { start.addingTimeInterval(60) }).install().result == .skipped)
        #expect(try await d.updater(now: { start.addingTimeInterval(3700) }).install().version == "1.1.0")

        // Paused at 100 %: no new installs; what is installed stays.
        try d.publish("1.2.0", edit: Self.rollout(#"{"percent": 100, "paused": true}"#))
        let paused = try await d.updater().install()
        #expect(paused.result == .skipped && paused.message == "the rollout of release 1.2.0 is paused; this device waits")
        #expect(try await d.updater().status().installed.map(\.version) == ["1.0.0", "1.1.0"])
    }

    /// A device the rollout does not admit yet keeps the verified manifest: its idle checks
    /// are one `304` each, and when the schedule reaches its place it installs with no
    /// manifest fetched again; a new manifest replaces the kept one.
    @Test func aWaitingDeviceChecksWithA304AndStillFollowsTheSchedule() async throws {
        let d = try DeviceFixture()
        let start = Date()
        try d.publish("1.0.0", edit: Self.rollout(#"{"start": "\#(RFC3339.format(start))", "steps": [[0, 0], [3600, 100]]}"#))
        #expect(try await d.updater(now: { start.addingTimeInterval(60) }).install().result == .skipped)
        #expect(FileManager.default.fileExists(atPath: d.layout.deferredManifest))
        let before = try await d.server.settledLog().count
        #expect(try await d.updater(now: { start.addingTimeInterval(120) }).install().result == .skipped)
        var log = try await d.server.settledLog().dropFirst(before)
        #expect(log.map(\.request.path) == ["/stable/manifest.json"] && log.first?.status == 304 && log.first?.bodyBytesSent == 0, "\(log)")

        let installed = try await d.updater(now: { start.addingTimeInterval(3700) }).install()
        #expect(installed.version == "1.0.0")
        log = try await d.server.settledLog().dropFirst(before + 1)
        #expect(log.map(\.request.path) == ["/stable/manifest.json", "/stable/v1.0.0.tar.gz"] && log.first?.status == 304, "\(log)")
        #expect(!FileManager.default.fileExists(atPath: d.layout.deferredManifest), "kept only while waiting")
        #expect(try await d.updater().install().message == "up to date (manifest not modified since the last check)")

        // Kept bytes are verified again: a damaged file decides nothing, the feed is read anew.
        try d.publish("1.1.0", edit: Self.rollout(#"{"percent": 0}"#))
        #expect(try await d.updater().install().result == .skipped)
        let kept = try Data(contentsOf: URL(fileURLWithPath: d.layout.deferredManifest))
        try Data(String(decoding: kept, as: UTF8.self).replacingOccurrences(of: "\"percent\": 0", with: "\"percent\": 100").utf8)
            .write(to: URL(fileURLWithPath: d.layout.deferredManifest))
        #expect(try Data(contentsOf: URL(fileURLWithPath: d.layout.deferredManifest)) != kept)
        #expect(try await d.updater().install().result == .skipped)
        #expect(try Data(contentsOf: URL(fileURLWithPath: d.layout.deferredManifest)) == kept)
        #expect(try await d.updater().status().installed.map(\.version) == ["1.0.0"])
    }

    /// A manifest published before the newest one the device accepted (a stale cache
    /// replaying yesterday's "100 %") decides nothing; the device keeps what it has.
    @Test func aReplayedOlderManifestDecidesNothing() async throws {
        let d = try DeviceFixture()
        try d.publish("1.0.0")
        _ = try await d.updater().install()
        let before = try d.snapshot()
        let yesterday = RFC3339.format(Date().addingTimeInterval(-86_400))
        try d.publish("1.1.0") { $0["published"] = .string(yesterday) }
        let replay = try await d.updater().install()
        #expect(replay.result == .stale)
        #expect(replay.message.contains("was published at \(yesterday), before the newest one this device accepted"))
        #expect(try d.snapshot() == before, "nothing installed, nothing remembered")
    }

    /// A revoked version is left (the next start runs the newest good one) and never
    /// selected, staged or installed again; the next check installs what the feed offers.
    @Test func aRevokedVersionIsLeftAndNeverSelectedAgain() async throws {
        let d = try DeviceFixture()
        try await d.installAndCommit(["1.0.0", "1.1.0"])
        try d.publish("1.2.0") { $0["revoked"] = .array([.string("1.1.0")]) }
        let first = try await d.updater().install()
        // The newest good version is staged for the next reload or start.
        #expect(first.result == .staged && first.version == "1.0.0", "\(first)")
        #expect(first.message.hasPrefix("release 1.2.0 revokes 1.1.0: this device leaves it and never selects it again; staged 1.0.0"))
        var status = try await d.updater().status()
        #expect(status.blacklist == ["1.1.0"] && status.lastKnownGood == nil && status.selected == .installed("1.0.0") && status.pending == "1.0.0")
        let restart = try d.updater()
        let started = try await restart.start(bridge: nil, clock: MonotonicClock(ManualClock()))
        #expect(started.current == .installed("1.0.0"))
        await restart.shutdown()
        #expect(try await d.updater().install().version == "1.2.0")
        status = try await d.updater().status()
        #expect(status.pending == "1.2.0" && status.blacklist == ["1.1.0"])
    }
}

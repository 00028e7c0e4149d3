import ClientFoundation
import ClientUpdater
import Foundation
import StrictJSON
import TestSupport
import Testing

/// The download policy with the real binary and its wall clock moved by libfaketime (as
/// DeviceTimeTests do): outside its download window a device verifies the manifest, stages
/// nothing, says why and until when, reports one `download-deferred` per episode, and
/// downloads inside the window (docs/download-policy.md).
@Suite(.serialized)
struct DownloadDeferralTests {
    static func wall(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return "@" + f.string(from: date)
    }

    /// `clientctl ARGS…` with its wall clock starting at `at`.
    @discardableResult
    static func clientctl(_ arguments: [String], at: Date, expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> Subprocess.Result
    {
        let r = try await Subprocess.run(
            "faketime", ["-f", wall(at), ClientctlBinary.path] + arguments, environment: ["FAKETIME_DONT_FAKE_MONOTONIC": "1"])
        #expect(r.status == status, "clientctl \(arguments.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    /// The journal's reports of `type`.
    static func reports(_ root: String, _ type: String) throws -> [JSONObject] {
        try DeviceReportsTests.journal(root).filter { DeviceReportsTests.string($0, "type") == type }
    }

    /// What `clients/` holds, dot files (partial downloads, staging) included.
    static func clients(_ root: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root + "/clients")) ?? []).sorted()
    }

    /// True when a file named `name` is anywhere under `root`.
    static func holds(_ root: String, _ name: String) -> Bool {
        let files = FileManager.default.enumerator(atPath: root)?.allObjects.compactMap { $0 as? String } ?? []
        return files.contains { ($0 as NSString).lastPathComponent == name }
    }

    @Test func outsideItsWindowADeviceVerifiesStagesNothingSaysWhyReportsOnceAndDownloadsInside() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let root = rig.dir("night")
        try await rig.clientctl([
            "init", "--root", root, "--app", "com.example.notes", "--channel", "stable",
            "--manifest-url", rig.server.url("/stable/manifest.json").absoluteString,
            "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
            "--download-window", "01:00-05:00@UTC", "--report-url", DeviceReportsTests.reportURL,
        ])
        // Tomorrow at noon UTC (after the release's `published`), then 01:00 the day after, as the window opens.
        let midnight = Calendar(identifier: .gregorian).startOfDay(for: Date().addingTimeInterval(86_400))
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = try #require(TimeZone(identifier: "UTC"))
        let day = utc.startOfDay(for: midnight.addingTimeInterval(12 * 3600))
        let noon = day.addingTimeInterval(12 * 3600)
        let opens = day.addingTimeInterval(25 * 3600)

        let first = try await Self.clientctl(["install", "--root", root, "--json"], at: noon)
        let report = try JSONDecoder().decode(InstallReport.self, from: first.stdout)
        #expect(report.result == .deferred, "\(report)")
        #expect(report.message.contains("outside the download windows (01:00–05:00 UTC)"), "\(report.message)")
        #expect(Self.clients(root).filter { !$0.hasPrefix(".lock") }.isEmpty, "nothing staged: \(Self.clients(root))")
        #expect(
            rig.server.requests.filter { $0.path.hasSuffix(".tar.gz") || $0.path.contains("/patches/") }.isEmpty,
            "no archive asked for")
        #expect(Self.holds(root, "deferred-manifest.json"), "the manifest is kept for the next check")

        let explained = try await Self.clientctl(["status", "--root", root, "--explain"], at: noon)
        let when = RFC3339.format(opens)
        #expect(explained.output.contains("download deferred: outside the download windows (01:00–05:00 UTC)"), "\(explained.output)")
        #expect(explained.output.contains("may download from \(when)"), "\(explained.output)")

        // Checks within the same episode: deferred again, reported once.
        try await Self.clientctl(["install", "--root", root], at: noon.addingTimeInterval(3600))
        try await Self.clientctl(["install", "--root", root], at: noon.addingTimeInterval(7200))
        let deferred = try Self.reports(root, "download-deferred")
        #expect(deferred.count == 1, "one report per episode: \(deferred)")
        #expect(deferred.first.flatMap { DeviceReportsTests.string($0, "reason") } == "window")
        #expect(deferred.first.flatMap { DeviceReportsTests.string($0, "version") } == "1.0.0")
        #expect(try Self.reports(root, "update-found").isEmpty)

        // Inside the window: it downloads.
        let inside = try await Self.clientctl(["install", "--root", root, "--json"], at: opens)
        let installed = try JSONDecoder().decode(InstallReport.self, from: inside.stdout)
        #expect(installed.result == .installed && installed.version == "1.0.0", "\(installed)")
        #expect(Self.clients(root).contains("v1.0.0"))
        #expect(!Self.holds(root, "deferred-manifest.json"))
        #expect(try Self.reports(root, "download-deferred").count == 1)
    }
}

extension DownloadDeferralTests {
    /// A deferral followed by one failed download (a CDN edge that has the manifest first and
    /// answers 404 for the archive) must not freeze the device: the check after it installs
    /// the release, as on a device that never deferred. Before the fix the kept manifest went
    /// with the failed check while `state.json` kept its ETag, and every later check said
    /// "up to date (manifest not modified since the last check)" until the next publish.
    /// A root of `rig`'s channel that downloads only in `01:00-05:00@UTC` (and `extra`).
    static func nightRoot(_ rig: TargetingRig, _ extra: [String] = []) async throws -> String {
        let root = rig.dir("night")
        try await rig.clientctl(
            [
                "init", "--root", root, "--app", "com.example.notes", "--channel", "stable",
                "--manifest-url", rig.server.url("/stable/manifest.json").absoluteString,
                "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
                "--download-window", "01:00-05:00@UTC",
            ] + extra)
        return root
    }

    /// The start of a UTC day at least a day from now (after any release's `published`).
    static func aDayAhead() throws -> Date {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = try #require(TimeZone(identifier: "UTC"))
        return utc.startOfDay(for: Date().addingTimeInterval(86_400 + 12 * 3600))
    }

    @Test func aDeferralThenAFailedDownloadDoesNotFreezeTheDevice() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let root = try await Self.nightRoot(rig)
        let day = try Self.aDayAhead()
        let noon = day.addingTimeInterval(12 * 3600)
        let opens = day.addingTimeInterval(25 * 3600)
        let deferred = try JSONDecoder().decode(
            InstallReport.self, from: try await Self.clientctl(["install", "--root", root, "--json"], at: noon).stdout)
        #expect(deferred.result == .deferred, "\(deferred)")

        // The window opens; the edge has the manifest, not the archive yet.
        let archive = rig.channelFolder + "/v1.0.0.tar.gz"
        try FileManager.default.moveItem(atPath: archive, toPath: archive + ".later")
        let failed = try await Self.clientctl(["install", "--root", root], at: opens, expect: 65)
        #expect(failed.errorOutput.contains("404"), "\(failed.errorOutput)")
        try FileManager.default.moveItem(atPath: archive + ".later", toPath: archive)

        let next = try JSONDecoder().decode(
            InstallReport.self, from: try await Self.clientctl(["install", "--root", root, "--json"], at: opens.addingTimeInterval(600)).stdout)
        #expect(next.result == .installed && next.version == "1.0.0", "\(next)")
        #expect(!Self.holds(root, "deferred-manifest.json"))
    }

    /// Found by the simulator (seed 10005 of 40 devices for 10 days, `up-to-date`): a
    /// deferral kept the manifest and recorded its ETag; the next check, on a clock past the
    /// release's expiry, said "stale" and dropped the kept manifest but left the ETag. Once the
    /// clock was set back (it had run ahead), every check was a 304 that said "up to date"
    /// while the release, unexpired at the device's clock, was offered inside its window.
    @Test func aDeferralThenAnExpiryDoesNotFreezeTheDeviceOnceItsClockIsSetBack() async throws {
        let rig = try TargetingRig()
        let day = try Self.aDayAhead()
        let expires = day.addingTimeInterval(26 * 3600)  // 02:00 UTC the next day
        try await rig.publish("1.0.0", ["--expires", RFC3339.format(expires)])
        let root = try await Self.nightRoot(rig)
        let deferred = try JSONDecoder().decode(
            InstallReport.self,
            from: try await Self.clientctl(["install", "--root", root, "--json"], at: day.addingTimeInterval(12 * 3600)).stdout)
        #expect(deferred.result == .deferred, "\(deferred)")
        // A clock that runs ahead: past the expiry (and outside the window).
        let stale = try JSONDecoder().decode(
            InstallReport.self,
            from: try await Self.clientctl(["install", "--root", root, "--json"], at: day.addingTimeInterval(30 * 3600)).stdout)
        #expect(stale.result == .stale, "\(stale)")
        // Set right: 01:30 UTC the next day, inside the window and before the expiry.
        let next = try JSONDecoder().decode(
            InstallReport.self,
            from: try await Self.clientctl(["install", "--root", root, "--json"], at: day.addingTimeInterval(25.5 * 3600)).stdout)
        #expect(next.result == .installed && next.version == "1.0.0", "\(next)")
    }
}

@Suite struct DownloadPolicyMediaTests {
    /// A stick is no download: a device outside its window and on `metered never` still
    /// installs from offline media, while its feed defers the same release.
    @Test func offlineMediaIsNotHeldByTheDownloadPolicy() async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0")
        _ = try await rig.export()
        let root = try await rig.device()
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = try #require(TimeZone(identifier: "UTC"))
        // A window that opens two hours from now and lasts one: now is outside it.
        let start = utc.component(.hour, from: Date().addingTimeInterval(2 * 3600))
        let window = String(format: "%02d:00-%02d:00@UTC", start, (start + 1) % 24)
        try await rig.clientctl(["download", "set", "--root", root, "--download-window", window, "--metered", "never"])
        let feed = try rig.report(try await rig.clientctl(["install", "--root", root, "--json"]))
        #expect(feed.result == .deferred && feed.message.contains("outside the download windows"), "\(feed)")
        let stick = try rig.report(try await rig.installFrom(root))
        #expect(stick.result == .installed && stick.version == "1.0.0", "\(stick)")
    }
}

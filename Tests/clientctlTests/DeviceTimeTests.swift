import AuthenticatedTime
import ClientUpdater
import Foundation
import StrictJSON
import TestSupport
import Testing

/// The device's time with the real binary and the wall clock moved under it
/// (docs/device-time.md): Debian's libfaketime (`faketime`, LD_PRELOAD) moves only the wall
/// clock (`FAKETIME_DONT_FAKE_MONOTONIC=1`: `CLOCK_MONOTONIC` and `CLOCK_BOOTTIME` are the
/// kernel's), which is what a board without a battery-backed clock, a wrong NTP answer or
/// an operator's `date -s` does. This machine allows no time namespace to an unprivileged
/// test (`unshare --time` needs CAP_SYS_ADMIN), so libfaketime it is, through its own
/// `faketime` command: preloaded by hand, without the shared memory `faketime` sets up, the
/// library loses a Swift program's arguments.
///
/// Under a running program libfaketime can only move the wall clock forward: its wrapper of
/// `timerfd_settime` shifts the kernel's monotonic timers that libdispatch arms by a
/// backward offset too, so after any backward change even a bare `Task.sleep(for: .seconds(1))`
/// never returns (tried with a ten-line program: `+1d` ends, `-1d` hangs), which the
/// kernel never does for a real `date -s`. Backward jumps are tested where the wall clock is
/// read: one-shot commands started in 1970 here, and the apply driver, the machine and the
/// device clock on injected clocks (`ApplyDriverTests`, `ApplyMachineTests`, `DeviceClockTests`).
@Suite(.serialized)
struct DeviceTimeTests {
    static let day: TimeInterval = 86_400

    static func at(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return "@" + f.string(from: date)
    }

    /// `clientctl ARGS…`, with its wall clock at `wall` (`@YYYY-MM-DD hh:mm:ss` starts there
    /// and runs on) and its monotonic clocks untouched.
    static func clientctl(_ arguments: [String], wall: String? = nil) async throws -> Subprocess.Result {
        guard let wall else { return try await ClientctlBinary.run(arguments) }
        return try await Subprocess.run(
            "faketime", ["-f", wall, ClientctlBinary.path] + arguments, environment: ["FAKETIME_DONT_FAKE_MONOTONIC": "1"])
    }

    static func status(_ root: String, wall: String? = nil) async throws -> StatusReport {
        let result = try await clientctl(["status", "--root", root, "--json"], wall: wall)
        #expect(result.status == 0, "\(result.errorOutput)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(StatusReport.self, from: result.stdout)
    }

    /// The issue's case: a new device whose clock read 1970-01-02 installed a release that
    /// had expired 30 days before. Now its floor (the program's date, then every signed time
    /// it verifies) decides: the stale feed is refused, a fresh one taken, and `status` and a
    /// `clock-wrong` report say the clock is wrong.
    @Test func aDeviceBootingIn1970RefusesAStaleFeedAndTakesAFreshOne() async throws {
        let rig = try await ReleaseRig(label: "time-1970")
        let boot1970 = "@1970-01-02 00:00:00"
        // Published 60 days before this program's date, expired 30 days before it.
        let publishedAt = ProgramDate.released - 60 * Self.day
        let expired = ProgramDate.released - 30 * Self.day
        try FileManager.default.createDirectory(atPath: rig.tmp("old"), withIntermediateDirectories: true)
        try ReleaseRig.page(version: "1.0.0", script: "").write(to: URL(fileURLWithPath: rig.tmp("old/index.html")))
        let old = try await Self.clientctl(
            [
                "publish", rig.tmp("old"), "--app", rig.app, "--channel", "stable", "--version", "1.0.0", "--min-shell", "1.0.0",
                "--key", rig.key + ".pem", "--out", rig.releases, "--expires", RFC3339.format(expired),
            ], wall: Self.at(publishedAt))
        #expect(old.status == 0, "\(old.errorOutput)")
        // Reports go nowhere (nothing listens), so they stay in the journal to be read.
        try await rig.run([
            "init", "--root", rig.root, "--force", "--app", rig.app, "--channel", "stable",
            "--manifest-url", "file://" + rig.releases + "/stable/manifest.json", "--trust", rig.key + ".pub.pem",
            "--shell-version", "1.0.0", "--embedded", rig.tmp("seed"), "--report-url", "http://127.0.0.1:9/",
        ])

        let stale = try await Self.clientctl(["install", "--root", rig.root], wall: boot1970)
        #expect(
            stale.output.contains("the feed is stale: release 1.0.0 expired at \(RFC3339.format(expired))"), "\(stale.output) \(stale.errorOutput)")
        var status = try await Self.status(rig.root, wall: boot1970)
        #expect(status.current == .embedded, "nothing of the stale feed was installed")
        var clock = try #require(status.clock)
        #expect(clock.verdict == .behindFloor && clock.trusted == ProgramDate.released, "\(clock)")
        #expect(clock.line.hasPrefix("wrong: the wall clock reads 1970-01-02T"), "\(clock.line)")

        // A fresh release (published now, 30 days to live) is taken; its signed time is the floor.
        try await rig.publish("1.0.1", script: ReleaseRig.acknowledging, arguments: ["--expires", "30d"])
        let fresh = try await Self.clientctl(["install", "--root", rig.root], wall: boot1970)
        #expect(fresh.status == 0, "\(fresh.errorOutput)")
        status = try await Self.status(rig.root, wall: boot1970)
        clock = try #require(status.clock)
        #expect(status.pending == "1.0.1" || status.current == .installed("1.0.1"), "\(status)")
        #expect(clock.floorSource == "release 1.0.1 published" && clock.floor > ProgramDate.released, "\(clock)")
        #expect(abs(clock.floor.timeIntervalSinceNow) < 600, "the floor is the release's signed time: \(clock.floor)")

        // One clock-wrong report for the episode, whatever the number of checks.
        let journal = try String(contentsOfFile: rig.tmp("device/reports/journal.jsonl"), encoding: .utf8)
        let wrong = journal.split(separator: "\n").filter { $0.contains("\"clock-wrong\"") }
        #expect(wrong.count == 1, "\(journal)")
        #expect(wrong.first?.contains("\"clock-behind\"") == true)

        // The real clock again: trusted, and the report journal holds no second one.
        status = try await Self.status(rig.root)
        #expect(status.clock?.verdict == .trusted, "\(String(describing: status.clock))")
    }

    /// Uptane's "clock at MAXINT" case: a device whose clock runs years ahead refuses every
    /// release as expired, forever; with time servers it decides by their time. One of the
    /// three lies by ten years: it is named and outvoted.
    @Test func aDeviceIn2099TakesAFreshFeedWithAuthenticatedTime() async throws {
        let rig = try await ReleaseRig(label: "time-2099")
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging, arguments: ["--expires", "30d"])
        let year2099 = "@2099-06-01 00:00:00"

        // No time servers: the floor cannot tell a clock that is ahead, so the feed is stale.
        let alone = try await Self.clientctl(["install", "--root", rig.root], wall: year2099)
        #expect(alone.output.contains("the feed is stale"), "\(alone.output) \(alone.errorOutput)")

        let honest = [try await RoughlyServer(scratch: rig.tmp.path), try await RoughlyServer(scratch: rig.tmp.path)]
        let liar = try await RoughlyServer(scratch: rig.tmp.path, offset: "+10y")
        defer { for server in honest + [liar] { server.stop() } }
        let servers = (honest + [liar]).flatMap { s in
            ["--time-server", "\(s.server)", "--time-server-key", Data(s.server.publicKey).base64EncodedString()]
        }
        let root = rig.tmp("device-2099")
        try await rig.run(
            [
                "init", "--root", root, "--app", rig.app, "--channel", "stable",
                "--manifest-url", "file://" + rig.releases + "/stable/manifest.json", "--trust", rig.key + ".pub.pem",
                "--shell-version", "1.0.0", "--embedded", rig.tmp("seed"),
            ] + servers)
        let installed = try await Self.clientctl(["install", "--root", root], wall: year2099)
        #expect(installed.status == 0 && !installed.output.contains("stale"), "\(installed.output) \(installed.errorOutput)")
        let status = try await Self.status(root, wall: year2099)
        #expect(status.pending == "1.0.0" || status.current == .installed("1.0.0"), "\(status)")
        let clock = try #require(status.clock)
        #expect(clock.verdict == .aheadOfAuthenticated, "\(clock)")
        #expect(abs(clock.trusted.timeIntervalSinceNow) < 60, "decided by the servers' time, not 2099: \(clock.trusted)")
        #expect(clock.authenticated?.servers.sorted() == honest.map { "\($0.server)" }.sorted(), "\(clock)")
        #expect(clock.outvoted.count == 1 && clock.outvoted[0].contains("\(liar.server)"), "\(clock.outvoted)")
        #expect(clock.line.contains("ahead of the time servers'"), "\(clock.line)")

        // Bad settings are refused with one line, exit 64, nothing written.
        let bad = try await Self.clientctl(
            [
                "init", "--root", rig.tmp("bad"), "--app", rig.app, "--channel", "stable",
                "--manifest-url", "file://" + rig.releases + "/stable/manifest.json", "--trust", rig.key + ".pub.pem",
                "--shell-version", "1.0.0", "--time-server", "roughtime://127.0.0.1:2002",
            ])
        #expect(bad.status == 64 && bad.errorOutput.contains("each server needs its key"), "\(bad.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: rig.tmp("bad")))
        let quorum = try await Self.clientctl(
            [
                "init", "--root", rig.tmp("bad"), "--app", rig.app, "--channel", "stable",
                "--manifest-url", "file://" + rig.releases + "/stable/manifest.json", "--trust", rig.key + ".pub.pem",
                "--shell-version", "1.0.0", "--time-quorum", "3",
            ] + Array(servers.prefix(8)))
        #expect(quorum.status == 64 && quorum.errorOutput.contains("--time-quorum 3 is out of range (1…2"), "\(quorum.errorOutput) \(quorum.output)")
    }

    /// Issue 65, items 1 and 4, with real `roughly` servers. Two honest servers (radius 1 s
    /// and 30 s, both 20 s ahead of this machine, so this machine's clock is the one "behind")
    /// and one 20 s behind them with radius 5 s: the wide honest answer overlaps both others.
    /// A device whose wall clock reads 2099 authenticates (the sets share a server: no
    /// rivals) and takes a fresh release. A release then signed on a machine whose clock
    /// reads 2099 is refused and named, and the next release signed on the right time is
    /// taken: the channel is not frozen.
    @Test func aSlightlyWrongServerAndASignerIn2099DoNotFreezeADevice() async throws {
        let rig = try await ReleaseRig(label: "time-quorum")
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging, arguments: ["--expires", "30d"])
        let year2099 = "@2099-06-01 00:00:00"
        let narrow = try await RoughlyServer(scratch: rig.tmp.path, offset: "+20", radius: 1)
        let wide = try await RoughlyServer(scratch: rig.tmp.path, offset: "+20", radius: 30)
        let behind = try await RoughlyServer(scratch: rig.tmp.path, radius: 5)
        defer { for server in [narrow, wide, behind] { server.stop() } }
        let servers = [narrow, wide, behind].flatMap { s in
            ["--time-server", "\(s.server)", "--time-server-key", Data(s.server.publicKey).base64EncodedString()]
        }
        let root = rig.tmp("device-quorum")
        try await rig.run(
            [
                "init", "--root", root, "--app", rig.app, "--channel", "stable",
                "--manifest-url", "file://" + rig.releases + "/stable/manifest.json", "--trust", rig.key + ".pub.pem",
                "--shell-version", "1.0.0", "--embedded", rig.tmp("seed"),
            ] + servers)
        let installed = try await Self.clientctl(["install", "--root", root], wall: year2099)
        #expect(installed.status == 0 && installed.output == "installed 1.0.0\n", "\(installed.output) \(installed.errorOutput)")
        let clock = try #require(try await Self.status(root, wall: year2099).clock)
        #expect(clock.authenticationFailure == nil && clock.outvoted.isEmpty, "\(clock)")
        #expect(clock.authenticated?.servers.count == 3, "\(clock)")
        #expect(abs(clock.trusted.timeIntervalSinceNow) < 120, "decided by the servers' time, not 2099: \(clock.trusted)")

        // A signer in 2099 (publish says so unless told): the device names it and keeps 1.0.0.
        let signer = try await Self.clientctl(
            [
                "publish", rig.tmp("build-1.0.0"), "--app", rig.app, "--channel", "stable", "--version", "1.1.0", "--min-shell", "1.0.0",
                "--key", rig.key + ".pem", "--out", rig.releases, "--allow-far-future",
            ], wall: year2099)
        #expect(signer.status == 0, "\(signer.errorOutput)")
        let refused = try await Self.clientctl(["install", "--root", root], wall: year2099)
        #expect(refused.status == 65, "\(refused.output) \(refused.errorOutput)")
        #expect(refused.errorOutput.contains("release 1.1.0 was published at 2099-06-01T00:00:"), "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("after the latest time this device's time servers vouch for ("), "\(refused.errorOutput)")
        // The next release, signed on the right time, is no replay of 2099.
        try await rig.publish("1.2.0", script: ReleaseRig.acknowledging, arguments: ["--expires", "30d"])
        let next = try await Self.clientctl(["install", "--root", root], wall: year2099)
        #expect(next.status == 0 && next.output == "installed 1.2.0\n", "\(next.output) \(next.errorOutput)")
    }

    /// Issue 65, item 2: a device whose one time server (quorum 1 of 1, a real `roughly`
    /// whose clock reads 2019) vouches for a time before this program's release date. The
    /// answer is not used and no decision goes below that date: a feed that expired 30 days
    /// ago is stale, as it is for the same device without the server.
    @Test func oneServerIn2019CannotTakeADeviceBelowItsProgramsDate() async throws {
        let rig = try await ReleaseRig(label: "time-2019")
        let now = Date()
        let expired = now - 30 * Self.day
        try FileManager.default.createDirectory(atPath: rig.tmp("old"), withIntermediateDirectories: true)
        try ReleaseRig.page(version: "1.0.0", script: "").write(to: URL(fileURLWithPath: rig.tmp("old/index.html")))
        let old = try await Self.clientctl(
            [
                "publish", rig.tmp("old"), "--app", rig.app, "--channel", "stable", "--version", "1.0.0", "--min-shell", "1.0.0",
                "--key", rig.key + ".pem", "--out", rig.releases, "--expires", RFC3339.format(expired),
            ], wall: Self.at(now - 60 * Self.day))
        #expect(old.status == 0, "\(old.errorOutput)")
        let server = try await RoughlyServer(scratch: rig.tmp.path, offset: "@2019-06-01 00:00:00")
        defer { server.stop() }
        let root = rig.tmp("device-2019")
        try await rig.run([
            "init", "--root", root, "--app", rig.app, "--channel", "stable",
            "--manifest-url", "file://" + rig.releases + "/stable/manifest.json", "--trust", rig.key + ".pub.pem",
            "--shell-version", "1.0.0", "--embedded", rig.tmp("seed"),
            "--time-server", "\(server.server)", "--time-server-key", Data(server.server.publicKey).base64EncodedString(),
        ])
        let stale = try await Self.clientctl(["install", "--root", root])
        #expect(stale.status == 0, "\(stale.errorOutput)")
        #expect(stale.output.contains("the feed is stale: release 1.0.0 expired at \(RFC3339.format(expired))"), "\(stale.output)")
        let status = try await Self.status(root)
        #expect(status.current == .embedded, "nothing of the stale feed was installed")
        let clock = try #require(status.clock)
        #expect(clock.authenticated == nil && clock.trusted >= ProgramDate.released, "\(clock)")
        #expect(clock.authenticationFailure?.contains(" vouch for 2019-") == true, "\(clock)")
        #expect(clock.authenticationFailure?.hasSuffix(": not used") == true, "\(clock)")
    }

    /// `status` until `deadline` (monotonic), each sample with the instant its command had
    /// ended by: a sample ended before the instant a wait must last until says the wait was
    /// not cut short; a later one (a loaded machine) says nothing, so the test never races it.
    static func samples(
        _ rig: ReleaseRig, until deadline: ContinuousClock.Instant
    ) async throws -> [(status: StatusReport, endedBy: ContinuousClock.Instant)] {
        var taken: [(StatusReport, ContinuousClock.Instant)] = []
        while ContinuousClock.now < deadline {
            let status = try await rig.status()
            taken.append((status, ContinuousClock.now))
            try await WorldTime.pass(.milliseconds(500), "the pace of the status samples over a quiet window")
        }
        return taken
    }

    /// A rig with 1.0.0 installed, and `serve` on it under libfaketime with its offset read
    /// from a file at every call (FAKETIME_NO_CACHE): write `+1d` to it to move the wall clock.
    static func servedUnderFaketime(
        startupTimeout: Double, label: String, initArguments: [String] = []
    ) async throws -> (ReleaseRig, ServeProcess, offset: String) {
        let rig = try await ReleaseRig(startupTimeout: startupTimeout, label: label, initArguments: initArguments)
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging, arguments: ["--expires", "365d"])
        try await rig.run(["install", "--root", rig.root])
        let offset = rig.tmp("faketime")
        try Data("+0\n".utf8).write(to: URL(fileURLWithPath: offset))
        let serve = try await ServeProcess(
            root: rig.root, scratch: rig.tmp.path, environment: ["FAKETIME_DONT_FAKE_MONOTONIC": "1"],
            wrapper: ["/usr/bin/faketime", "-f", "+0", "env", "-u", "FAKETIME", "FAKETIME_TIMESTAMP_FILE=\(offset)", "FAKETIME_NO_CACHE=1"])
        return (rig, serve, offset)
    }

    /// A wall clock moved under a running `serve` during an `idle` wait: a day ahead, then
    /// thirty years. Idle time goes by the monotonic clock from the host's start, so the
    /// release asking for 20 s of quiet is not switched to before 20 s have passed. (The
    /// rule itself is tested on a manual clock in `ApplyDriverTests`; this is its one case
    /// with the real binary and a real clock, kept short.)
    @Test func aWallClockMovedAheadUnderServeNeverHurriesAnIdleWait() async throws {
        // Idle time counts from the later of the host's start and the last input (a headless
        // page sends none): no earlier than this.
        let started = ContinuousClock.now
        let (rig, serve, offset) = try await Self.servedUnderFaketime(startupTimeout: 60, label: "time-serve")
        let page = try OpenChromiumPage(serve.baseURL)
        defer { page.close() }
        _ = try await rig.waitForStatus(timeout: 120) { $0.lastKnownGood == "1.0.0" }

        try await rig.publish(
            "1.1.0", script: ReleaseRig.acknowledging, arguments: ["--apply", "idle", "--idle-seconds", "20", "--expires", "365d"])
        await #expect(try serve.control("check").status == 200)
        _ = try await rig.waitForStatus(timeout: 120) { $0.pending == "1.1.0" || $0.current == .installed("1.1.0") }
        try Data("+1d\n".utf8).write(to: URL(fileURLWithPath: offset))
        try await WorldTime.pass(.seconds(2), "the wall clock stays at its first jump a while before the next")
        try Data("+10950d\n".utf8).write(to: URL(fileURLWithPath: offset))
        let quiet = started + .seconds(20)
        for sample in try await Self.samples(rig, until: quiet - .seconds(2)) where sample.endedBy < quiet {
            #expect(
                sample.status.current == .installed("1.0.0") && sample.status.trial == nil,
                "thirty years ahead did not end the idle wait early: \(sample.status.current)")
        }
        let status = try await rig.waitForStatus(timeout: 300) { $0.lastKnownGood == "1.1.0" }
        #expect(status.current == .installed("1.1.0"), "the wait ended: \(status.current)")
        // SIGTERM ends the faketime wrapper (143) and serve with it.
        _ = serve.stop(SIGTERM)
    }

    /// A wall clock moved under a running `serve` during a trial: a minute ahead, then thirty
    /// years. The trial's timeout is the monotonic clock's: the broken release stays on trial
    /// for its 15 s, then is rolled back.
    @Test func aWallClockMovedAheadUnderServeNeverEndsATrialEarly() async throws {
        let (rig, serve, offset) = try await Self.servedUnderFaketime(startupTimeout: 15, label: "time-trial")
        _ = try await Chromium.dumpDOM(serve.baseURL)
        _ = try await rig.waitForStatus(timeout: 120) { $0.lastKnownGood == "1.0.0" }

        try await rig.publish("1.1.0", script: ReleaseRig.broken, arguments: ["--expires", "365d"])
        await #expect(try serve.control("check").status == 200)
        // The trial starts within this call: no earlier than here.
        let asked = ContinuousClock.now
        await #expect(try serve.control("switch-to-pending").status == 200)
        try Data("+60\n".utf8).write(to: URL(fileURLWithPath: offset))
        try await WorldTime.pass(.seconds(1), "the wall clock stays at its first jump a while before the next")
        try Data("+10950d\n".utf8).write(to: URL(fileURLWithPath: offset))
        let timeout = asked + .seconds(15)
        for sample in try await Self.samples(rig, until: timeout - .seconds(2)) where sample.endedBy < timeout {
            #expect(sample.status.trial?.version == "1.1.0", "thirty years ahead did not end the trial early: \(sample.status)")
        }
        let status = try await rig.waitForStatus(timeout: 300) { $0.trial == nil }
        #expect(status.current == .installed("1.0.0") && status.retry == ["1.1.0"], "rolled back, not stuck: \(status)")
        _ = serve.stop(SIGTERM)
    }

    /// Moves the wall clock of the `serve` under `offset` (libfaketime's offset file).
    static func move(_ offset: String, to value: String) throws {
        try Data("\(value)\n".utf8).write(to: URL(fileURLWithPath: offset))
    }

    /// A lease a page holds for 60 s under `serve`, with the wall clock moved a day, then
    /// thirty years ahead while it runs: the apply status says the clock jumped within the
    /// driver's next decision (at most 30 s apart), the lease still ends 60 s (monotonic)
    /// after it was taken, never at once, and the staged release then takes over.
    @Test func aWallClockMovedAheadUnderServeNeverEndsALeaseEarly() async throws {
        let (rig, serve, offset) = try await Self.servedUnderFaketime(startupTimeout: 60, label: "time-lease")
        let page = try OpenChromiumPage(serve.baseURL)
        defer { page.close() }
        _ = try await rig.waitForStatus(timeout: 120) { $0.lastKnownGood == "1.0.0" }
        try await rig.publish("1.1.0", script: ReleaseRig.acknowledging, arguments: ["--apply", "now", "--expires", "365d"])
        // The lease runs from this request on: it ends no earlier than 60 s after it was sent.
        let held = ContinuousClock.now
        let hold = try await Curl.request(
            serve.baseURL + "__clientctl/hold", method: "POST", headers: ["X-Clientctl-Shim: 1", "Content-Type: application/json"],
            body: Data(#"{"lease":"time-test","seconds":60}"#.utf8))
        #expect(hold.status == 200, "the lease is taken: \(hold.status) \(hold.body)")
        await #expect(try serve.control("check").status == 200)
        _ = try await rig.waitForStatus(timeout: 120) { $0.apply?.contains("lease") == true || $0.current == .installed("1.1.0") }
        try Self.move(offset, to: "+1d")
        try await WorldTime.pass(.seconds(2), "the wall clock stays at its first jump a while before the next")
        try Self.move(offset, to: "+10950d")
        // The driver decides at least every 30 s: its next decision sees the jump.
        let noticed = try await rig.waitForStatus(timeout: 90) {
            $0.apply?.contains("wall clock jumped") == true || $0.current == .installed("1.1.0")
        }
        #expect(noticed.apply?.contains("wall clock jumped") == true, "status says the clock jumped: \(noticed.apply ?? "nil")")
        let ends = held + .seconds(60)
        for sample in try await Self.samples(rig, until: ends - .seconds(2)) where sample.endedBy < ends {
            #expect(sample.status.current == .installed("1.0.0"), "thirty years ahead did not end the lease early: \(sample.status.current)")
        }
        let status = try await rig.waitForStatus(timeout: 300) { $0.lastKnownGood == "1.1.0" }
        #expect(status.current == .installed("1.1.0"), "the lease ended and 1.1.0 took over: \(status.current)")
        _ = serve.stop(SIGTERM)
    }

    /// A deadline reached by a jump of the wall clock: the release waits for an hour of
    /// quiet (`idle`) with a deadline 2 h after it was published and no grace. Moved 3 h
    /// ahead under `serve`, the device is past the deadline at the driver's next decision
    /// and switches; before the jump it waited.
    @Test func aDeadlineReachedByAJumpOfTheWallClockSwitchesAtTheNextDecision() async throws {
        let (rig, serve, offset) = try await Self.servedUnderFaketime(startupTimeout: 60, label: "time-deadline")
        let page = try OpenChromiumPage(serve.baseURL)
        defer { page.close() }
        _ = try await rig.waitForStatus(timeout: 120) { $0.lastKnownGood == "1.0.0" }
        try await rig.publish(
            "1.1.0", script: ReleaseRig.acknowledging,
            arguments: ["--apply", "idle", "--idle-seconds", "3600", "--deadline", "2h", "--grace", "0s", "--expires", "365d"])
        await #expect(try serve.control("check").status == 200)
        let waiting = try await rig.waitForStatus(timeout: 120) { $0.apply != nil || $0.current == .installed("1.1.0") }
        #expect(waiting.current == .installed("1.0.0"), "an hour of quiet and a deadline 2 h away: it waits (\(waiting.apply ?? "nil"))")
        try Self.move(offset, to: "+3h")
        let status = try await rig.waitForStatus(timeout: 300) { $0.lastKnownGood == "1.1.0" }
        #expect(status.current == .installed("1.1.0"), "past the deadline: \(status.current)")
        _ = serve.stop(SIGTERM)
    }

    /// A maintenance window reached by a jump of the wall clock: the device's window starts
    /// 3 h from now (UTC); moved 4 h ahead under `serve`, the device is inside it at the
    /// driver's next decision and switches; before the jump it waited.
    @Test func aWindowReachedByAJumpOfTheWallClockOpensAtTheNextDecision() async throws {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC") ?? utc.timeZone
        let opens = utc.dateComponents([.hour, .minute], from: Date().addingTimeInterval(3 * 3600))
        let closes = utc.dateComponents([.hour, .minute], from: Date().addingTimeInterval(5 * 3600))
        let hhmm = { (c: DateComponents) in String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0) }
        let window = "\(hhmm(opens))-\(hhmm(closes))@UTC"
        let (rig, serve, offset) = try await Self.servedUnderFaketime(
            startupTimeout: 60, label: "time-window", initArguments: ["--apply-window", window])
        let page = try OpenChromiumPage(serve.baseURL)
        defer { page.close() }
        _ = try await rig.waitForStatus(timeout: 120) { $0.lastKnownGood == "1.0.0" }
        try await rig.publish("1.1.0", script: ReleaseRig.acknowledging, arguments: ["--apply", "window", "--expires", "365d"])
        await #expect(try serve.control("check").status == 200)
        let waiting = try await rig.waitForStatus(timeout: 120) { $0.apply != nil || $0.current == .installed("1.1.0") }
        #expect(waiting.current == .installed("1.0.0"), "the window \(window) is 3 h away: it waits (\(waiting.apply ?? "nil"))")
        try Self.move(offset, to: "+4h")
        let status = try await rig.waitForStatus(timeout: 300) { $0.lastKnownGood == "1.1.0" }
        #expect(status.current == .installed("1.1.0"), "inside the window: \(status.current)")
        _ = serve.stop(SIGTERM)
    }

    /// Issue 75 through the program: `status` prints the last decision's `time …:` lines
    /// from `time.json` (here one that decided nothing), a control character in a server's
    /// name escaped, and `status --json` carries it as `clock.lastDecision`.
    @Test func statusPrintsTheLastDecisionEscaped() async throws {
        let rig = try await ReleaseRig(label: "time-decision")
        let evil = "roughtime://evil\u{1b}[2J:2002"
        let record = """
            {"format": "clientctl-time-v1", "floor": "2020-01-01T00:00:00Z", "floorSource": "old",
             "authenticationFailure": "authenticated time: no 3 verified answers overlap, the quorum is 3 of 3: …",
             "authenticationTried": "2027-02-14T08:00:00Z",
             "undecided": {"quorum": 3, "asked": 3,
               "answered": [{"server": "roughtime://127.0.0.1:2002", "earliest": "2027-02-14T07:59:52Z", "latest": "2027-02-14T07:59:58Z"},
                            {"server": "roughtime://evil\\u001b[2J:2002", "earliest": "2027-02-14T08:10:00Z", "latest": "2027-02-14T08:10:06Z"}],
               "overlaps": [], "agreed": [], "outvoted": [],
               "failed": [{"server": "roughtime://127.0.0.3:2002", "reason": "no valid answer within 3 seconds"}],
               "undecided": "no two verified answers overlap; the quorum is 3 of 3"}}
            """
        try Data(record.utf8).write(to: URL(fileURLWithPath: rig.root + "/time.json"))
        let text = try await rig.run(["status", "--root", rig.root]).output
        #expect(!text.contains("\u{1b}"), "no escape character reaches the terminal")
        #expect(text.contains("time quorum:     3 of 3 must agree, asked 2027-02-14T08:00:00Z\n"), "\(text)")
        #expect(text.contains("time answered:   roughtime://127.0.0.1:2002, roughtime://evil\\u{1b}[2J:2002\n"), "\(text)")
        #expect(text.contains("time overlapped: none\n"), "\(text)")
        #expect(text.contains("time failed:     roughtime://127.0.0.3:2002 (no valid answer within 3 seconds)\n"), "\(text)")
        #expect(text.contains("time undecided:  no interval: no two verified answers overlap; the quorum is 3 of 3\n"), "\(text)")
        let json = try await rig.run(["status", "--root", rig.root, "--json"]).stdout
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let decision = try #require((object["clock"] as? [String: Any])?["lastDecision"] as? [String: Any], "\(object)")
        #expect((decision["answered"] as? [[String: Any]])?.last?["server"] as? String == evil)
        #expect(decision["undecided"] as? String == "no two verified answers overlap; the quorum is 3 of 3")
    }
}

import ArchivePublishing
import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import Logging
import ReleaseSigning
import SignedArchive
import SignedManifest
import Synchronization

/// One seed's world: an origin the real publisher writes, a mirror that lags, devices that are
/// real roots checked by the real updater (`ArchiveChannel`, `Downloader`, `MirrorTransport`,
/// the download policy and its holds, the watchdog's trials), all on the simulation's clock.
/// Every choice is drawn from the seed; the invariants are checked after every step.
final class SimRun: @unchecked Sendable {
    // @unchecked: one run is driven by one task; the parts it shares with the updater's tasks
    // (the clock, the network, the holds) are Sendable themselves.
    struct Options {
        var seed: UInt64
        var devices: Int
        var days: Int
        /// Devices are set up with the site mirror (false: the same world without it, for the
        /// comparison the mirror invariant makes).
        var mirrors = true
        var work: String
        var key: Ed25519.PrivateKey
        var publicPEM: String
        var say: (String) -> Void
    }

    /// What one device is in the world.
    struct Device {
        var layout: RootLayout
        var config: DeviceConfig
        var offset: Duration
        /// Where in the hour it checks while faults last.
        var late: Duration
        var holds: SimHolds
        /// The device's own clock: its checks start at their scheduled moments whatever time
        /// the other devices' checks took, so a seed runs the same on every run.
        var clock: SimClock
        var monotonic: MonotonicClock
        var fails: Set<String> = []
        /// The device ran a release once: from then on it is never dark.
        var started = false
        /// The versions last verified against their releases (current, pending, last good):
        /// their trees are hashed again only when one of them changes.
        var verified: [String] = []
        /// The version running after each check (pending first), for the mirror comparison.
        var history: [String] = []
        /// Whether each check began inside the device's download windows.
        var inWindow: [Bool] = []
    }

    /// What the run found.
    struct Outcome {
        var violations: [String] = []
        var lines: [String] = []
        var events = 0
        var checks = 0
        var releases = 0
        var faults = 0
        var histories: [[String]] = []
    }

    static let wallOrigin = Date(timeIntervalSince1970: 1_805_932_800)  // 2027-03-25T00:00:00Z: Berlin springs forward on the 28th
    static let app = "com.example.notes"

    let options: Options
    /// The world's clock: the release side's events and the hours.
    let clock = SimClock()
    let network: SimNetwork
    var devices: [Device] = []
    var outcome = Outcome()
    var events: SimRandom
    /// Published versions: version → the digest of its tree.
    var trees: [String: String] = [:]
    var revoked: Set<String> = []
    var newest = Version(1, 0, 0)

    var origin: String { options.work + "/origin" }
    var mirror: String { options.work + "/mirror" }

    init(_ options: Options) {
        self.options = options
        network = SimNetwork(seed: options.seed, originRoot: options.work + "/origin", mirrorRoot: options.work + "/mirror")
        events = SimRandom.stream(options.seed, ["events"])
    }

    var wallNow: Date { Self.wallOrigin.addingTimeInterval(clock.now.offset.inSeconds) }

    /// When the step being told began: a check's lines carry its start, not the moment its
    /// parallel downloads happened to end, so a seed's lines are the same on every run.
    var stepStart: SimInstant?

    func say(_ line: String) {
        let stamp = (stepStart ?? clock.now).offset.inSeconds
        let text = String(format: "%03d:%02d:%02d ", Int(stamp) / 3600, Int(stamp) / 60 % 60, Int(stamp) % 60) + line
        outcome.lines.append(text)
        options.say(text)
    }

    func violation(_ name: String, _ detail: String) {
        let line = "VIOLATION \(name): \(detail)"
        outcome.violations.append(line)
        say(line)
    }

    // MARK: the release side

    /// A client of `version`: index.html and 12 scripts, each version rewriting a few.
    func build(_ version: Version, changed: Set<Int>) throws -> String {
        let dir = options.work + "/src/\(version)"
        try FileManager.default.createDirectory(atPath: dir + "/assets", withIntermediateDirectories: true)
        try Data("<!doctype html><title>notes</title><p id=version>\(version)</p><script src=assets/a0.js></script>\n".utf8)
            .write(to: URL(fileURLWithPath: dir + "/index.html"))
        let previous = options.work + "/src/\(newest)"
        for i in 0..<12 {
            let target = dir + "/assets/a\(i).js"
            if !changed.contains(i), FileManager.default.fileExists(atPath: previous + "/assets/a\(i).js"), previous != dir {
                try FileManager.default.copyItem(atPath: previous + "/assets/a\(i).js", toPath: target)
            } else {
                // Text that does not compress away: the per-file path, the patch and the archive
                // each win sometimes, as with real bundles.
                var r = SimRandom.stream(options.seed, ["file", "\(version)", "\(i)"])
                var text = "// notes \(version) part \(i)\n"
                for _ in 0..<(40 + i * 8) { text += "var k\(r.next() % 1000) = \"\(String(r.next(), radix: 36))\(String(r.next(), radix: 36))\";\n" }
                try Data(text.utf8).write(to: URL(fileURLWithPath: target))
            }
        }
        return dir
    }

    func publish(_ version: Version) async throws {
        var changed: Set<Int> = []
        for _ in 0..<3 { changed.insert(Int(events.next() % 12)) }
        let source = try build(version, changed: version == Version(1, 0, 0) ? Set(0..<12) : changed)
        var request = PublishRequest(
            source: source, app: Self.app, channel: "stable", version: version, minShellVersion: Version(1, 0, 0),
            outputDirectory: origin, expires: wallNow.addingTimeInterval(60 * 86_400), now: wallNow)
        request.deltaBases = 1
        _ = try await Publisher.publish(request, key: options.key)
        trees[version.description] = try Self.treeDigest(source)
        newest = version
        outcome.releases += 1
        // Each release fails to start on some devices (its page never acknowledges there).
        var failing: [Int] = []
        if version != Version(1, 0, 0), events.chance(0.2) {
            for n in devices.indices where events.chance(0.3) {
                devices[n].fails.insert(version.description)
                failing.append(n)
            }
        }
        say("publish \(version)" + (failing.isEmpty ? "" : " (fails to start on devices \(failing.map(String.init).joined(separator: ",")))"))
    }

    func syncMirror() throws {
        let target = mirror + "/stable"
        if FileManager.default.fileExists(atPath: target) { try FileManager.default.removeItem(atPath: target) }
        try FileManager.default.createDirectory(atPath: mirror, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: origin + "/stable", toPath: target)
        say("mirror synced at \(newest)")
    }

    // MARK: devices

    func setUp() async throws {
        try FileManager.default.createDirectory(atPath: origin, withIntermediateDirectories: true)
        try await publish(Version(1, 0, 0))
        try syncMirror()
        for n in 0..<options.devices {
            var r = SimRandom.stream(options.seed, ["device", "\(n)"])
            var settings = ArchiveSettings(
                channel: "stable", manifestURL: "https://origin.sim/stable/manifest.json", trustedKeys: [options.publicPEM])
            if options.mirrors, n % 2 == 0 { settings.mirrors = ["http://mirror.sim/site/stable/manifest.json"] }
            let windows: [String] =
                switch n % 3 {
                case 1: ["04:00-05:00@UTC"]
                case 2: ["22:00-02:00@Europe/Berlin"]
                default: []
                }
            // A site that keeps to a window often caps its rate too (a download then lasts long
            // enough for a window to close, or a hold to start, in its middle).
            let rate = windows.isEmpty ? nil : "4KiB/s"
            let config = try DeviceConfig(
                app: Self.app, channelKind: .signedArchive, settings: settings, shellVersion: Version(1, 0, 0),
                deviceSettings: DeviceSettings(startupTimeoutSeconds: 60, downloadWindows: windows, downloadRate: rate))
            let layout = RootLayout(root: options.work + "/devices/\(n)")
            try await RootInitializer.write(config, to: layout, force: false, store: layout.clients)
            // The device's place in every rollout, from the seed (init would make it at random).
            let id = (0..<4).map { _ in String(format: "%08x", UInt32(truncatingIfNeeded: r.next())) }.joined()
            try AtomicFile.write(Data((id + "\n").utf8), to: layout.root + "/device-id")
            // The devices of the one-hour window check in its last seconds while faults last:
            // every download of theirs runs across the window's close.
            let offset = Duration.seconds(Int64(r.next() % 3600))
            let late = n % 3 == 1 ? Duration.seconds(Int64(3580 + r.next() % 20)) : offset
            let own = SimClock()
            let holds = SimHolds(clock: own, wallOrigin: Self.wallOrigin)
            devices.append(
                Device(layout: layout, config: config, offset: offset, late: late, holds: holds, clock: own, monotonic: MonotonicClock(own)))
        }
    }

    func updater(_ n: Int) throws -> Updater {
        let device = devices[n]
        let clock = device.clock
        let wall: @Sendable () -> Date = { Self.wallOrigin.addingTimeInterval(clock.now.offset.inSeconds) }
        var downloader = Downloader(
            transport: network, retry: RetryPolicy(maxAttempts: 3, initialDelay: .seconds(1), maxDelay: .seconds(4)),
            sleeper: SimSleeper(clock: clock), idleTimeout: .seconds(30))
        downloader.rateLimiter = device.config.downloadRate.flatMap(ByteRate.init(parsing:)).map {
            RateLimiter(rate: $0, clock: device.monotonic)
        }
        var channel = try ArchiveChannel(layout: device.layout, config: device.config, downloader: downloader, now: wall, logger: Self.quiet)
        channel.downloadGate = DownloadGate(probe: FixedLinkProbe(), holds: device.holds, clock: device.monotonic)
        return Updater(layout: device.layout, config: device.config, channel: channel, now: wall, logger: Self.quiet)
    }

    /// The updater's log goes nowhere: the run's own lines say what happened.
    static let quiet = Logger(label: "device-sim", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Whether device `n`'s policy bars payload bytes at `date`.
    func barred(_ n: Int) -> @Sendable (Date) -> Bool {
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        let windows = devices[n].config.deviceSettings.downloadPolicy(systemZone: utc).windows
        let holds = devices[n].holds
        return { date in
            (!windows.isEmpty && !windows.contains { $0.contains(date) }) || holds.hold(at: date) != nil
        }
    }

    /// One check of device `n`, its trial when it staged a version, and the invariants.
    func check(_ n: Int, faults: Bool) async {
        let clock = devices[n].clock
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        let windows = devices[n].config.deviceSettings.downloadPolicy(systemZone: utc).windows
        let opened = windows.isEmpty || windows.contains { $0.contains(Self.wallOrigin.addingTimeInterval(clock.now.offset.inSeconds)) }
        stepStart = clock.now
        defer { stepStart = nil }
        outcome.checks += 1
        let number = devices[n].history.count + 1
        let wall: @Sendable () -> Date = { Self.wallOrigin.addingTimeInterval(clock.now.offset.inSeconds) }
        network.begin(SimNetwork.Context(device: n, check: number, clock: clock, faults: faults, wall: wall, barred: barred(n)))
        var report: InstallReport?
        var failure: String?
        do {
            report = try await updater(n).install()
        } catch {
            failure = "\(error)"
        }
        let ledger = network.end()
        outcome.faults += ledger.faults
        for line in ledger.barredOverflow { violation("window-or-hold", line) }
        let said = report.map { "\($0.result.rawValue)" + ($0.version.map { " \($0)" } ?? "") } ?? "failed"
        say("device \(n) check \(number): \(said)" + (failure.map { ": \(Self.short($0))" } ?? ""))
        // "Up to date" is never said while the origin answered and a newer release the device
        // may take exists.
        if let report, report.result == .upToDate, ledger.originAnsweredManifest {
            await upToDateHonesty(n, report: report)
        }
        if let report, report.result == .installed || report.result == .staged, let pending = report.pending {
            await trial(n, pending)
        }
        await invariants(n)
        devices[n].history.append(await running(n) ?? "-")
        devices[n].inWindow.append(opened)
    }

    func upToDateHonesty(_ n: Int, report: InstallReport) async {
        guard let status = try? await updater(n).status() else { return }
        let offered = newest.description
        guard !revoked.contains(offered), !status.blacklist.contains(offered) else { return }
        let accepted = status.highestAccepted.flatMap(Version.init) ?? Version(0, 0, 0)
        if accepted < newest {
            violation("up-to-date", "device \(n) said \"\(report.message)\" while \(offered) is offered and it accepted \(accepted)")
        }
    }

    /// The page: a version that fails on this device never acknowledges (the watchdog rolls
    /// back after the start-up timeout); any other acknowledges after a few seconds.
    func trial(_ n: Int, _ version: String) async {
        do {
            _ = try await updater(n).reload()
            if devices[n].fails.contains(version) {
                devices[n].clock.advance(by: .seconds(61))
                let after = try await updater(n).collectGarbage()
                say("device \(n): \(version) never started; " + (after.failed == version ? "rolled back" : "no rollback"))
            } else {
                devices[n].clock.advance(by: .seconds(3))
                _ = try await updater(n).startupDidComplete(version: version)
            }
        } catch {
            say("device \(n): trial of \(version): \(Self.short("\(error)"))")
        }
    }

    /// The version device `n` would run: pending first, else current.
    func running(_ n: Int) async -> String? {
        guard let status = try? await updater(n).status() else { return nil }
        if let pending = status.pending { return pending }
        if case .installed(let version) = status.current { return version }
        return nil
    }

    /// After every step: nothing runs or is staged that is not a verified release's exact
    /// tree; never dark; the running and last-good versions' files are kept.
    func invariants(_ n: Int) async {
        let layout = devices[n].layout
        guard let status = try? await updater(n).status() else {
            violation("readable", "device \(n): status does not read")
            return
        }
        guard case .installed(let current) = status.current else {
            if devices[n].started { violation("never-dark", "device \(n) has nothing to serve (\(status.current))") }
            return
        }
        devices[n].started = true
        let held = [current, status.pending, status.lastKnownGood].compactMap { $0 }
        guard held != devices[n].verified else { return }
        devices[n].verified = held
        for version in held {
            let folder = layout.clients + "/v" + version
            guard let expected = trees[version] else {
                violation("verified", "device \(n) holds \(version), which was never published")
                continue
            }
            guard let found = try? Self.treeDigest(folder) else {
                violation("kept", "device \(n): the files of \(version) (running, pending or last good) are gone")
                continue
            }
            if found != expected { violation("verified", "device \(n): clients/v\(version) differs from release \(version)") }
        }
    }

    // MARK: the run

    func run() async throws -> Outcome {
        try await setUp()
        // Warm-up: every device takes 1.0.0 with no fault, inside its window.
        clock.advance(to: SimInstant(offset: .seconds(3600)))
        let hours = options.days * 24
        let quiet = min(24, hours / 2)
        var version = Version(1, 0, 0)
        for hour in 0..<hours {
            let faults = hour > 0 && hour < hours - quiet
            let start = Duration.seconds(Int64(hour) * 3600)
            clock.advance(to: SimInstant(offset: start))
            if hour == hours - quiet {
                try syncMirror()
                for device in devices { device.holds.clear() }
                say("faults stop")
            } else if faults {
                if hour > 0, events.chance(1.0 / 8) {
                    version = Version(version.major, version.minor + 1, 0)
                    try await publish(version)
                }
                if events.chance(0.02),
                    let old = trees.keys.compactMap(Version.init).filter({ $0 < newest && !revoked.contains($0.description) }).min()
                {
                    _ = try await ChannelEditor.apply(.revoke([old]), releases: origin, channel: "stable", signers: [options.key], now: wallNow)
                    revoked.insert(old.description)
                    say("revoke \(old)")
                }
                if events.chance(0.4) { try syncMirror() }
                for n in devices.indices where events.chance(0.05) {
                    let from = wallNow.addingTimeInterval(Double(events.next() % 3600))
                    let until = from.addingTimeInterval(600 + Double(events.next() % 1800))
                    devices[n].holds.add(from: from, until: until)
                    say("device \(n): a hold from \(RFC3339Stamp.string(from)) to \(RFC3339Stamp.string(until))")
                }
            }
            outcome.events += 1
            let offset = { (n: Int) in faults ? self.devices[n].late : self.devices[n].offset }
            for n in devices.indices.sorted(by: { (offset($0), $0) < (offset($1), $1) }) {
                clock.advance(to: SimInstant(offset: start + offset(n)))
                devices[n].clock.advance(to: clock.now)
                await check(n, faults: faults)
            }
        }
        // Liveness: once faults stopped and the origin answered, every device runs the newest
        // release it may take within the quiet day (at most 24 checks, 4 inside a window).
        for n in devices.indices {
            let offered = newest.description
            guard let status = try? await updater(n).status(), !status.blacklist.contains(offered), !revoked.contains(offered) else {
                continue
            }
            let runs = await running(n)
            if runs != offered {
                violation("liveness", "device \(n) runs \(runs ?? "nothing") a day after faults stopped; \(offered) is offered")
            }
        }
        // The checks that could download: those inside the device's windows, after what the
        // device ran before the first of them (so that a first download one window late
        // compares with it).
        outcome.histories = devices.map { device in
            let before = device.inWindow.firstIndex(of: true).map { $0 > 0 ? device.history[$0 - 1] : "-" } ?? "-"
            return [before] + zip(device.history, device.inWindow).filter(\.1).map(\.0)
        }
        return outcome
    }

    static func short(_ text: String) -> String {
        let line = text.split(separator: "\n").first.map(String.init) ?? text
        return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }

    /// The digest of a tree: every regular file's path and contents, sorted.
    static func treeDigest(_ folder: String) throws -> String {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw CocoaError(.fileNoSuchFile)
        }
        var lines: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let relative = enumerator?.nextObject() as? String {
            let path = folder + "/" + relative
            var st = stat()
            guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            lines.append(relative + " " + (try Digest.hex(.sha256, ofFileAt: path)))
        }
        return Digest.hex(.sha256, of: Array(lines.sorted().joined(separator: "\n").utf8))
    }
}

/// A retry's backoff: time passes, nobody waits.
struct SimSleeper: Sleeper {
    let clock: SimClock
    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        clock.advance(by: duration)
    }
}

/// A device's holds, as its page takes them: intervals of its wall clock.
final class SimHolds: DownloadHolding, Sendable {
    private let clock: SimClock
    private let wallOrigin: Date
    private let intervals = Mutex<[(from: Date, until: Date)]>([])

    init(clock: SimClock, wallOrigin: Date) {
        self.clock = clock
        self.wallOrigin = wallOrigin
    }

    func add(from: Date, until: Date) { intervals.withLock { $0.append((from, until)) } }
    func clear() { intervals.withLock { $0.removeAll() } }

    func hold(at date: Date) -> DownloadHold? {
        intervals.withLock { list in
            list.filter { $0.from <= date && date < $0.until }.map(\.until).max().map { DownloadHold(holders: ["the page"], until: $0) }
        }
    }

    private var wall: Date { wallOrigin.addingTimeInterval(clock.now.offset.inSeconds) }

    func current() -> DownloadHold? { hold(at: wall) }

    func waitForHold() async throws {
        while true {
            if current() != nil { return }
            let now = wall
            guard let next = intervals.withLock({ $0.map(\.from).filter { $0 > now }.min() }) else {
                // No hold ahead: wait until cancelled (a day at a time, on the simulation's clock).
                try await clock.sleep(until: clock.now.advanced(by: .seconds(86_400)))
                continue
            }
            try await clock.sleep(until: SimInstant(offset: .seconds(next.timeIntervalSince(wallOrigin))))
        }
    }
}

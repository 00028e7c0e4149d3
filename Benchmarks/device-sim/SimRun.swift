import ArchivePublishing
import ClientFoundation
import ClientUpdater
import DeviceIdentity
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
        /// A 48 KiB media file in the releases and a 1 KiB/s cap on windowed devices (else
        /// 4 KiB/s): downloads of a minute and more.
        var longDownloads = false
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
        /// The device's wall clock, which jumps.
        var wall: SimWall
        /// Its id (its place in every rollout, what `id in cohort` reads) and labels.
        var id: DeviceID
        var labels: DeviceLabels
        /// The last manifest served to it, and the restriction it holds (nil: none).
        var lastManifest: [UInt8]?
        var restriction: [UInt8]?
        /// Versions a signed document it was served revoked.
        var heardRevoked: Set<String> = []
        var fails: Set<String> = []
        /// The versions in its clients/ folder after its last step.
        var unpacked: Set<String> = []
        /// The version it last ran above its floor (said once).
        var floorBelow: String?
        /// The versions it ran or staged.
        var ran: Set<String> = []
        /// Its updater while its process lives.
        var updater: Updater?
        /// Its key, which signs its report batches (made at set-up, as `init` makes one).
        var key: SimDeviceKey
        /// The sender of its fleet reports while its process lives (a restart makes another,
        /// as a new process does).
        var sender: ReportSender?
        /// The sender's jitter, drawn from the device's stream.
        var jitter: SimJitter
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
        /// Faults met by the checks' requests (``SimNetwork/Ledger/faults``).
        var faults = 0
        /// Takes a restriction would have refused had it held before its `issued` (the
        /// device's clock behind the rollout key's).
        var early = 0
        /// Checks killed at a crash point.
        var kills = 0
        /// Checks in which a write failed as on a full or failing disk.
        var diskFaults = 0
        /// Times a device ran a release above its floor.
        var floorBelow = 0
        /// Reports the collector stored, those that came again, and the collector's faults.
        var reports = 0
        var reportDuplicates = 0
        var reportFaults = 0
        var histories: [[String]] = []
    }

    static let wallOrigin = Date(timeIntervalSince1970: 1_805_932_800)  // 2027-03-25T00:00:00Z: Berlin springs forward on the 28th
    static let app = "com.example.notes"
    /// The collector every device reports to (``SimCollector``, on the simulated network).
    static let collectorURL = "https://collector.sim/"

    let options: Options
    /// The world's clock: the release side's events and the hours.
    let clock = SimClock()
    let network: SimNetwork
    var devices: [Device] = []
    var outcome = Outcome()
    var events: SimRandom
    /// Published versions: version → the digest of its tree.
    var trees: [String: String] = [:]
    /// Every manifest any device was served, by the ETag the network gave it: what a `304`
    /// to a request naming that ETag decides on.
    var manifestsByETag: [String: [UInt8]] = [:]
    /// Every restriction any device was served, by its ETag: what a `304` naming it keeps.
    var restrictionsByETag: [String: [UInt8]] = [:]
    var revoked: Set<String> = []
    var newest = Version(1, 0, 0)
    /// The rollout role's key, named by the channel's trust root.
    let rolloutKey: Ed25519.PrivateKey
    /// Each cohort file written: its digest → the device ids it lists.
    var cohortFiles: [String: Set<String>] = [:]
    /// Manifests and indexes verified, by their bytes.
    var parsed: [[UInt8]: Manifest?] = [:]
    var indexes: [[UInt8]: [Manifest]] = [:]
    /// The pin in force on the channel's release (its target's text and version), if any.
    var pinned: (target: String, version: Version)?

    var origin: String { options.work + "/origin" }
    var mirror: String { options.work + "/mirror" }

    init(_ options: Options) {
        self.options = options
        network = SimNetwork(seed: options.seed, originRoot: options.work + "/origin", mirrorRoot: options.work + "/mirror")
        events = SimRandom.stream(options.seed, ["events"])
        // Generated: no line shows its bytes, and signatures do not decide anything the run prints.
        rolloutKey = (try? Ed25519.PrivateKey.generate()) ?? options.key
    }

    var wallNow: Date { Self.wallOrigin.addingTimeInterval(clock.now.offset.inSeconds) }

    /// When the step being told began: a check's lines carry its start, not the moment its
    /// parallel downloads happened to end, so a seed's lines are the same on every run.
    var stepStart: SimInstant?

    func say(_ line: String, at instant: SimInstant? = nil) {
        let stamp = (instant ?? stepStart ?? clock.now).offset.inSeconds
        let text =
            String(format: "%03d:%02d:%02d ", Int(stamp) / 3600, Int(stamp) / 60 % 60, Int(stamp) % 60)
            + Self.replayable(line, work: options.work)
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
        // With long downloads, a media file (48 KiB that do not compress), new in one release of
        // two: a windowed device's download then lasts a minute or more at its cap, long enough
        // for a window to close, a hold to start or the wall clock to jump in its middle.
        let media = dir + "/assets/media.txt"
        let keepMedia = version != Version(1, 0, 0) && previous != dir && FileManager.default.fileExists(atPath: previous + "/assets/media.txt")
        if options.longDownloads, keepMedia, events.chance(0.5) {
            try FileManager.default.copyItem(atPath: previous + "/assets/media.txt", toPath: media)
        } else if options.longDownloads {
            var r = SimRandom.stream(options.seed, ["media", "\(version)"])
            var text = ""
            while text.utf8.count < 48 * 1024 { text += String(r.next(), radix: 36) + "\n" }
            try Data(text.utf8).write(to: URL(fileURLWithPath: media))
        }
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
        let terms = version == Version(1, 0, 0) ? [] : try releaseTerms(&request)
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
        say(
            "publish \(version)" + terms.map { ", " + $0 }.joined()
                + (failing.isEmpty ? "" : " (fails to start on devices \(failing.map(String.init).joined(separator: ",")))"))
    }

    func syncMirror() throws {
        try copyToMirror()
        say("mirror synced at \(newest)")
    }

    /// The site mirror copies the origin's channel as it is now; until the next copy it
    /// serves that one (it lags). Both worlds' syncs.
    func copyToMirror() throws {
        let target = mirror + "/stable"
        if FileManager.default.fileExists(atPath: target) { try FileManager.default.removeItem(atPath: target) }
        try FileManager.default.createDirectory(atPath: mirror, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: origin + "/stable", toPath: target)
    }

    // MARK: devices

    func setUp() async throws {
        try FileManager.default.createDirectory(atPath: origin, withIntermediateDirectories: true)
        try await writeTrustRoot()
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
            let rate = windows.isEmpty ? nil : options.longDownloads ? "1KiB/s" : "4KiB/s"
            // Labels, as init gives them: what targets and pins read.
            let labels = try DeviceLabels(["site": ["a", "b", "c"][Int(r.next() % 3)], "ring": r.chance(0.3) ? "beta" : "main"])
            let config = try DeviceConfig(
                app: Self.app, channelKind: .signedArchive, settings: settings, shellVersion: Version(1, 0, 0),
                deviceSettings: DeviceSettings(
                    startupTimeoutSeconds: 60, reportURL: Self.collectorURL, labels: labels, downloadWindows: windows, downloadRate: rate))
            let layout = RootLayout(root: options.work + "/devices/\(n)")
            try await RootInitializer.write(config, to: layout, force: false, store: layout.clients)
            // The device's place in every rollout, from the seed (init would make it at random).
            let text = (0..<4).map { _ in String(format: "%08x", UInt32(truncatingIfNeeded: r.next())) }.joined()
            try AtomicFile.write(Data((text + "\n").utf8), to: layout.root + "/device-id")
            guard let id = DeviceID(text) else { throw CocoaError(.fileReadCorruptFile) }
            // The devices of the one-hour window check in its last seconds while faults last:
            // every download of theirs runs across the window's close.
            let offset = Duration.seconds(Int64(r.next() % 3600))
            let late = n % 3 == 1 ? Duration.seconds(Int64(3580 + r.next() % 20)) : offset
            let own = SimClock()
            let wall = SimWall(clock: own, origin: Self.wallOrigin)
            let holds = SimHolds(wall: wall)
            devices.append(
                Device(
                    layout: layout, config: config, offset: offset, late: late, holds: holds, clock: own, monotonic: MonotonicClock(own),
                    wall: wall, id: id, labels: labels, key: try SimDeviceKey(), jitter: SimJitter(seed: options.seed, device: n)))
        }
        try setPilots()
        try await publish(Version(1, 0, 0))
        try syncMirror()
    }

    /// Device `n`'s updater, made once (as the agent keeps one) and again after a restart.
    func updater(_ n: Int) throws -> Updater {
        if let made = devices[n].updater { return made }
        let made = try makeUpdater(n)
        devices[n].updater = made
        return made
    }

    func makeUpdater(_ n: Int) throws -> Updater {
        try Self.makeUpdater(layout: devices[n].layout, config: devices[n].config, wall: devices[n].wall, holds: devices[n].holds, network: network)
    }

    /// An updater of the root at `layout` on the device's clocks, its holds and the network.
    static func makeUpdater(layout: RootLayout, config: DeviceConfig, wall deviceWall: SimWall, holds: SimHolds, network: SimNetwork) throws
        -> Updater
    {
        let clock = deviceWall.clock
        let monotonic = MonotonicClock(clock)
        let wall: @Sendable () -> Date = { deviceWall.now }
        var downloader = Downloader(
            // No jitter: the downloader draws it from the process's generator, not the seed's
            // (the agents' world does the same).
            transport: network, retry: RetryPolicy(maxAttempts: 3, initialDelay: .seconds(1), maxDelay: .seconds(4), jitter: 0),
            sleeper: SimSleeper(clock: clock), idleTimeout: .seconds(30))
        downloader.rateLimiter = config.downloadRate.flatMap(ByteRate.init(parsing:)).map { RateLimiter(rate: $0, clock: monotonic) }
        var channel = try ArchiveChannel(layout: layout, config: config, downloader: downloader, now: wall, logger: Self.quiet)
        channel.downloadGate = DownloadGate(probe: FixedLinkProbe(), holds: holds, clock: monotonic)
        // One object of a file list at a time: with four, which of them meets the mirror before
        // it is skipped (and so which source and fault each meets) is the scheduler's choice.
        channel.objectDownloads = 1
        return Updater(layout: layout, config: config, channel: channel, now: wall, logger: Self.quiet)
    }

    /// The updater's log goes nowhere: the run's own lines say what happened.
    static let quiet = Logger(label: "device-sim", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Whether device `n`'s policy bars payload bytes now: its wall clock outside its windows,
    /// or a hold in force on its monotonic clock.
    func barred(_ n: Int) -> @Sendable () -> Bool {
        Self.barred(config: devices[n].config, holds: devices[n].holds, wall: devices[n].wall)
    }

    static func barred(config: DeviceConfig, holds: SimHolds, wall: SimWall) -> @Sendable () -> Bool {
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        let windows = config.deviceSettings.downloadPolicy(systemZone: utc).windows
        return {
            (!windows.isEmpty && !windows.contains { $0.contains(wall.now) }) || holds.hold(at: wall.clock.now) != nil
        }
    }

    /// The download's stops that wait on the device's clock (``SimNetwork/Context/watchers``):
    /// the holds' waiter, and the windows' watcher when the device has windows. The same in a
    /// check of the simulation's and in a crash worker's: without them the worker's first chunk
    /// could move the clock before the watcher first read the wall clock, and a jump two
    /// seconds into the download was seen or not, by load.
    static func watchers(_ config: DeviceConfig) -> Int {
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        return config.deviceSettings.downloadPolicy(systemZone: utc).windows.isEmpty ? 1 : 2
    }

    /// One check of device `n`, its trial when it staged a version, and the invariants.
    func check(_ n: Int, faults: Bool) async {
        let clock = devices[n].clock
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        let windows = devices[n].config.deviceSettings.downloadPolicy(systemZone: utc).windows
        let deviceWall = devices[n].wall
        let startWall = deviceWall.now
        let opened = windows.isEmpty || windows.contains { $0.contains(startWall) }
        stepStart = clock.now
        defer { stepStart = nil }
        // The reports go out five minutes after the step began (``deliverReports(_:faults:at:)``).
        let reportsAt = clock.now.advanced(by: .seconds(300))
        outcome.checks += 1
        let number = devices[n].history.count + 1
        // Now and then, while faults last, the check's process is killed at a crash point: more
        // often when the device is behind the newest release inside its windows (its check has a
        // release to take).
        var crash = SimRandom.stream(options.seed, ["crash", "\(n)", "\(number)"])
        if faults, crash.chance(opened && devices[n].history.last != newest.description ? 0.6 : 0.01) {
            let point = SimCrash.points[Int(crash.next() % UInt64(SimCrash.points.count))]
            // Points a check passes many times (each write, chunk, entry) die at one of their first
            // hits; the others at their one hit.
            let count = SimCrash.repeated.contains(point) ? 1 + Int(crash.next() % 3) : 1
            await killedCheck(n, number: number, point: point, count: count, startWall: startWall)
            await afterStep(n, opened: opened)
            await deliverReports(n, faults: faults, at: reportsAt)
            return
        }
        // Now and then, while faults last, a write of the check fails as on a full or failing
        // disk (``SimDisk``): the check runs in a child that goes on after it.
        let behind = opened && devices[n].history.last != newest.description
        if faults, let fault = SimDisk.draw(seed: options.seed, device: n, check: number, behind: behind) {
            await faultedCheck(n, number: number, fault: fault, startWall: startWall)
            await afterStep(n, opened: opened)
            await deliverReports(n, faults: faults, at: reportsAt)
            return
        }
        network.begin(
            SimNetwork.Context(
                device: n, check: number, clock: clock, faults: faults, wall: { deviceWall.now }, barred: barred(n),
                lastJump: { deviceWall.lastJump(atOrBefore: clock.now) }, watchers: Self.watchers(devices[n].config)))
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
        let before = devices[n].lastManifest
        learn(n, ledger)
        let walls = [startWall, deviceWall.now]
        // What it took (a version that appeared in its clients/ folder, whatever the check
        // reported), the documents it was served let it take. A version it ran before is no
        // take: it goes back to it (leaving a revoked release, following a pin down).
        let unpacked = Self.unpacked(devices[n].layout)
        for taken in unpacked.subtracting(devices[n].unpacked).compactMap(Version.init).sorted()
        where !devices[n].ran.contains(taken.description) {
            judgeTake(n, taken, ledger: ledger, before: before, walls: walls)
        }
        devices[n].unpacked = unpacked
        // "Up to date" is never said while the origin answered and a newer release the device
        // may take exists.
        if let report, report.result == .installed || report.result == .staged, let pending = report.pending {
            await trial(n, pending)
        }
        if let report, report.result == .upToDate, ledger.originAnsweredManifest,
            mayTakeNewest(n, restriction: devices[n].restriction, walls: walls), let status = try? await updater(n).status()
        {
            upToDateHonesty(n, report: report, status: status)
        }
        await afterStep(n, opened: opened)
        await deliverReports(n, faults: faults, at: reportsAt)
    }

    /// After every step: the rules a device keeps whatever happened (one status read).
    func afterStep(_ n: Int, opened: Bool) async {
        let status = try? await updater(n).status()
        invariants(n, status)
        if let status { floorNote(n, status) }
        devices[n].history.append(status.flatMap(Self.running) ?? "-")
        if let status {
            if case .installed(let current) = status.current { devices[n].ran.insert(current) }
            if let pending = status.pending { devices[n].ran.insert(pending) }
        }
        devices[n].inWindow.append(opened)
    }

    /// What a child process needs to run check `number` of device `n` as the device would:
    /// its clocks, wall-clock jumps and holds (``SimCrash``).
    func childSpec(_ n: Int, number: Int) -> SimCrash.Spec {
        let clock = devices[n].clock
        return SimCrash.Spec(
            seed: options.seed, work: options.work, device: n, check: number, faults: true, now: SimCrash.nanoseconds(clock.now.offset),
            jumps: devices[n].wall.schedule.map { [SimCrash.nanoseconds($0.at.offset), SimCrash.nanoseconds($0.skew)] },
            holds: devices[n].holds.leases.map { [SimCrash.nanoseconds($0.from.offset), SimCrash.nanoseconds($0.until.offset)] })
    }

    /// Check `number` of device `n` runs in a child process killed the `count`-th time it
    /// reaches `point` (``SimCrash``); the device then restarts.
    func killedCheck(_ n: Int, number: Int, point: String, count: Int, startWall: Date) async {
        // The agent's process is the one that dies: the simulation's updater lets go of the root.
        if let updater = devices[n].updater { await updater.shutdown() }
        devices[n].updater = nil
        devices[n].sender = nil
        let clock = devices[n].clock
        let spec = childSpec(n, number: number)
        let ended: SimCrash.Ended
        do {
            ended = try SimCrash.run(spec, point: point, count: count)
        } catch {
            violation("crash", "device \(n) check \(number): the child process did not run: \(error)")
            return
        }
        outcome.kills += ended.killed ? 1 : 0
        for line in ended.overflow { violation("window-or-hold", line) }
        say(
            "device \(n) check \(number): "
                + (ended.killed ? "killed at \(point) (hit \(count))" : "\(ended.result ?? "no result") (\(point) reached fewer than \(count) times)")
        )
        if let now = ended.now { clock.advance(to: SimInstant(offset: .nanoseconds(now))) }
        // What it was served counts as if this process had been (revocations, the restriction
        // it holds, the newest manifest).
        let before = devices[n].lastManifest
        learn(n, ended.ledger)
        // The restart: the agent starts again on the root as the kill left it.
        clock.advance(by: .seconds(10))
        await restart(n)
        // What it took before it died (or the restart finished), the documents it was served let it take.
        let unpacked = Self.unpacked(devices[n].layout)
        for taken in unpacked.subtracting(devices[n].unpacked).compactMap(Version.init).sorted()
        where !devices[n].ran.contains(taken.description) {
            judgeTake(n, taken, ledger: ended.ledger, before: before, walls: [startWall, devices[n].wall.now])
        }
        devices[n].unpacked = unpacked
    }

    /// Starts device `n`'s agent again (``Updater/start(bridge:clock:shim:lockWait:)``:
    /// interrupted deletions finished, a dead process's trial failed, the version to serve
    /// chosen) and runs the trial it begins, then lets go of the root.
    func restart(_ n: Int) async {
        guard let updater = try? updater(n) else {
            violation("restart", "device \(n): no updater after the restart")
            return
        }
        do {
            let report = try await updater.start(bridge: nil, clock: devices[n].monotonic)
            say("device \(n): restarted" + (report.trial.map { ", trial of \($0)" } ?? ""))
            if let trial = report.trial {
                if devices[n].fails.contains(trial) {
                    devices[n].clock.advance(by: .seconds(61))
                    _ = try await updater.collectGarbage()
                } else {
                    devices[n].clock.advance(by: .seconds(3))
                    _ = try await updater.startupDidComplete(version: trial)
                }
            }
        } catch {
            say("device \(n): restart: \(Self.short("\(error)"))")
        }
        await updater.shutdown()
        devices[n].updater = nil
    }

    func upToDateHonesty(_ n: Int, report: InstallReport, status: StatusReport) {
        let offered = newest.description
        guard !revoked.contains(offered), !status.blacklist.contains(offered) else { return }
        let accepted = status.highestAccepted.flatMap(Version.init) ?? Version(0, 0, 0)
        // What it runs or stages counts too: a kill can leave a release installed and run
        // without its floor recorded (the note below).
        let holds = [Self.running(status).flatMap(Version.init), status.pending.flatMap(Version.init)].compactMap { $0 }
        if accepted < newest, !holds.contains(where: { $0 >= newest }) {
            violation("up-to-date", "device \(n) said \"\(report.message)\" while \(offered) is offered and it accepted \(accepted)")
        }
    }

    /// A device's floor (the highest release it accepted, never lowered) is at least what it
    /// runs; a step that leaves it below is said (and counted), not a violation: no rule of
    /// the design states it.
    func floorNote(_ n: Int, _ status: StatusReport) {
        guard case .installed(let current) = status.current, let running = Version(current) else { return }
        let floor = status.highestAccepted.flatMap(Version.init)
        guard floor.map({ $0 < running }) ?? true else { return }
        if devices[n].floorBelow != current {
            outcome.floorBelow += 1
            say("device \(n) runs \(current) with its floor at \(floor?.description ?? "none")")
        }
        devices[n].floorBelow = current
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
    static func running(_ status: StatusReport) -> String? {
        if let pending = status.pending { return pending }
        if case .installed(let version) = status.current { return version }
        return nil
    }

    /// After every step: nothing runs or is staged that is not a verified release's exact
    /// tree; never dark; the running and last-good versions' files are kept.
    func invariants(_ n: Int, _ status: StatusReport?) {
        let layout = devices[n].layout
        guard let status else {
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
        let quietStart = SimInstant(offset: .seconds(Int64(hours - quiet) * 3600))
        scheduleJumps(faultHours: hours - quiet)
        var version = Version(1, 0, 0)
        for hour in 0..<hours {
            let faults = hour > 0 && hour < hours - quiet
            let start = Duration.seconds(Int64(hour) * 3600)
            clock.advance(to: SimInstant(offset: start))
            if hour == hours - quiet {
                await quietTerms()
                try syncMirror()
                for device in devices { device.holds.clear() }
                say("faults stop")
            } else if faults {
                if hour > 0, events.chance(1.0 / 8) {
                    version = Version(version.major, version.minor + 1, 0)
                    try await publish(version)
                }
                try await releaseEvents()
                if events.chance(0.4) { try syncMirror() }
                for n in devices.indices where events.chance(0.05) {
                    // A page's hold: a lease on the device's monotonic clock.
                    let from = clock.now.advanced(by: .seconds(Int64(events.next() % 3600)))
                    let until = from.advanced(by: .seconds(600 + Int64(events.next() % 1800)))
                    devices[n].holds.add(from: from, until: until)
                    say("device \(n): a hold at \(Self.stamp(from)) for \(Int((until.offset - from.offset).inSeconds) / 60) min")
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
        // Liveness: once faults stopped and the origin answered, every device that may take the
        // newest release (all day long: not paused, capped, targeted or pinned away from it, not
        // expired) runs it within the quiet day (at most 24 checks, one inside a window).
        for n in devices.indices {
            let offered = newest.description
            guard let status = try? await updater(n).status(), !status.blacklist.contains(offered), !revoked.contains(offered),
                mayTakeNewest(n, restriction: originRestriction, walls: [devices[n].wall.date(at: quietStart), devices[n].wall.now])
            else {
                continue
            }
            let runs = Self.running(status)
            if runs != offered {
                violation("liveness", "device \(n) runs \(runs ?? "nothing") a day after faults stopped; \(offered) is offered")
            }
        }
        // Reports: every one journaled reached the collector, none twice.
        await reportsInvariant(end: SimInstant(offset: .seconds(Int64(hours) * 3600)))
        // The checks that could download: those inside the device's windows, after what the
        // device ran before the first of them (so that a first download one window late
        // compares with it).
        outcome.histories = devices.map { device in
            let before = device.inWindow.firstIndex(of: true).map { $0 > 0 ? device.history[$0 - 1] : "-" } ?? "-"
            return [before] + zip(device.history, device.inWindow).filter(\.1).map(\.0)
        }
        return outcome
    }

    /// Each device's wall clock jumps about once a day while faults last, by hours or days,
    /// forward or back, from a stream of its own: half the jumps at a random moment, half a few
    /// seconds or minutes after one of its checks begins (in the middle of its downloads).
    func scheduleJumps(faultHours: Int) {
        guard faultHours > 3 else { return }
        for n in devices.indices {
            var r = SimRandom.stream(options.seed, ["wall", "\(n)"])
            var skew = Duration.zero
            var moments: [SimInstant] = []
            let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
            let windows = devices[n].config.deviceSettings.downloadPolicy(systemZone: utc).windows
            for _ in 0..<max(1, faultHours / 24) where r.chance(0.8) {
                if r.chance(0.5) {
                    let hour = Int64(2 + r.next() % UInt64(faultHours - 3))
                    moments.append(SimInstant(offset: .seconds(hour * 3600 + Int64(r.next() % 3600))))
                    continue
                }
                // A second or a few into one of its checks inside its windows (on the simulation's
                // time: the skews are drawn after the moments), so into a download it runs.
                var at = Duration.zero
                for _ in 0..<48 {
                    let hour = Int64(2 + r.next() % UInt64(faultHours - 3))
                    at = .seconds(hour * 3600) + devices[n].late + .seconds(Int64(1 + r.next() % 4))
                    let wall = Self.wallOrigin.addingTimeInterval(at.inSeconds)
                    if windows.isEmpty || windows.contains(where: { $0.contains(wall) }) { break }
                }
                moments.append(SimInstant(offset: at))
            }
            for at in moments.sorted() {
                let size: Duration = r.chance(0.6) ? .seconds(Int64(1 + r.next() % 6) * 3600) : .seconds(Int64(1 + r.next() % 2) * 86_400)
                let step = r.chance(0.5) ? size : .zero - size
                skew += step
                devices[n].wall.jump(at: at, to: skew)
                say(
                    "device \(n): wall clock jumps \(Self.span(step)) at \(Self.stamp(at)) (then \(Self.span(skew)) off)", at: at)
            }
        }
    }

    /// A signed span of time in hours or days, as the lines write it.
    static func span(_ d: Duration) -> String {
        let seconds = Int(d.inSeconds)
        let sign = seconds < 0 ? "-" : "+"
        let a = abs(seconds)
        return a % 86_400 == 0 ? "\(sign)\(a / 86_400) d" : "\(sign)\(a / 3600) h"
    }

    /// The origin's restriction now, if any.
    var originRestriction: [UInt8]? {
        FileManager.default.contents(atPath: channelFolder + "/restriction.json").map { [UInt8]($0) }
    }

    /// The versions a root holds unpacked (`clients/v<version>`).
    static func unpacked(_ layout: RootLayout) -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.clients)) ?? []
        return Set(names.filter { $0.hasPrefix("v") && Version(String($0.dropFirst())) != nil }.map { String($0.dropFirst()) })
    }

    /// An instant as the run's lines write it.
    static func stamp(_ instant: SimInstant) -> String {
        let t = Int(instant.offset.inSeconds)
        return String(format: "%03d:%02d:%02d", t / 3600, t / 60 % 60, t % 60)
    }

    /// The first line of `text` (an error's), for a run's line; ``replayable(_:work:)`` cuts it.
    static func short(_ text: String) -> String {
        text.split(separator: "\n").first.map(String.init) ?? text
    }

    /// `line` as a run prints it, the same on every run of the seed: the run's folder (named
    /// by the process) is `WORK`, the random part of a temporary name (`state.json.tmp-<pid>-<n>`,
    /// `clients/.staging-v1.2.0-<n>`, `.trash-…-<n>`: the product draws it from the process's
    /// generator, not the seed's) is `N`, and then a line longer than 240 characters is cut.
    static func replayable(_ line: String, work: String) -> String {
        var text = line.replacingOccurrences(of: work, with: "WORK")
        for (pattern, template) in randomNames {
            text = pattern.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: template)
        }
        return text.count > 240 ? String(text.prefix(240)) + "…" : text
    }

    private static let randomNames: [(NSRegularExpression, String)] = [
        (#"\.tmp(-copy)?-[0-9]+(-[0-9]+)?"#, ".tmp$1-N"),
        (#"(/\.(?:staging|trash)-[^/\s:]*?)-[0-9a-f]+(-[0-9]+)?(?=[/\s:]|$)"#, "$1-N"),
    ].compactMap { pattern, template in (try? NSRegularExpression(pattern: pattern)).map { ($0, template) } }

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

/// A device's holds, as its page takes them: leases on its monotonic clock (as the agent's
/// `DownloadHolds` keeps them), so no jump of its wall clock makes one longer or shorter.
final class SimHolds: DownloadHolding, Sendable {
    private let wall: SimWall
    private let intervals = Mutex<[(from: SimInstant, until: SimInstant)]>([])

    init(wall: SimWall) { self.wall = wall }

    func add(from: SimInstant, until: SimInstant) { intervals.withLock { $0.append((from, until)) } }
    func clear() { intervals.withLock { $0.removeAll() } }
    var leases: [(from: SimInstant, until: SimInstant)] { intervals.withLock { $0 } }

    /// When the holds in force at `instant` end, if any holds.
    func hold(at instant: SimInstant) -> SimInstant? {
        intervals.withLock { list in list.filter { $0.from <= instant && instant < $0.until }.map(\.until).max() }
    }

    func current() -> DownloadHold? {
        let now = wall.clock.now
        return hold(at: now).map { DownloadHold(holders: ["the page"], until: wall.now.addingTimeInterval(($0.offset - now.offset).inSeconds)) }
    }

    func waitForHold() async throws {
        let clock = wall.clock
        while true {
            let now = clock.now
            if hold(at: now) != nil { return }
            guard let next = intervals.withLock({ $0.map(\.from).filter { $0 > now }.min() }) else {
                // No hold ahead: wait until cancelled (a day at a time, on the simulation's clock).
                try await clock.sleep(until: now.advanced(by: .seconds(86_400)))
                continue
            }
            try await clock.sleep(until: next)
        }
    }
}

import ApplyPolicy
import ArchivePublishing
import AuthenticatedTime
import ClientEngine
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

/// The agents' world (`device-sim --agents`, docs/simulation.md#the-agents-world): each device
/// is a root opened by `DeviceEngine.open` and run by `DeviceAgent.run()`, as `clientctl serve`
/// runs one: its own check loop and schedule, download policy and holds, apply driver, page
/// problems, watchdog and report delivery, all on the world's clock. A simulated page talks
/// to it through `AgentControl`, as the shim does: it acknowledges its start (soon, late or
/// never), throws after start and reloads, switches when the status says so, navigates,
/// takes download holds. Everything runs on one thread (``SimExecutor``); the driver moves
/// time to the next deadline only when every task waits, so a seed replays exactly.
final class AgentWorld: @unchecked Sendable {
    // @unchecked: the world's state is read and changed by its driver and by the devices'
    // tasks, all on the one thread of the SimExecutor, never at once.
    struct Options: Sendable {
        var seed: UInt64
        var devices: Int
        var days: Int
        var work: String
        /// The release key (PEM: the key type is not Sendable).
        var keyPEM: String
        var publicPEM: String
        var say: @Sendable (String) -> Void
    }

    /// How a release's page behaves on a device.
    enum PageKind: String {
        case good
        /// Never acknowledges its start: the watchdog rolls it back.
        case never
        /// Acknowledges after the startup timeout: too late, it is rolled back all the same.
        case late
        /// Acknowledges, then throws on every load and reloads: page problems roll it back.
        case throwing = "throws"
    }

    /// What the world found.
    struct Outcome {
        var violations: [String] = []
        var lines: [String] = []
        var checks = 0
        var releases = 0
        var faults = 0
        var requests = 0
        var restarts = 0
        var rollbacks = 0
        var loads = 0
        var reports = 0
        var reportDuplicates = 0
        var steps = 0
        var jobs = 0
    }

    /// One device: its root, clocks and page, and what the invariants keep of it.
    final class Device: @unchecked Sendable {
        // @unchecked: read and changed on the world's one thread only.
        let n: Int
        let layout: RootLayout
        let wall: SimWall
        let network: AgentNetwork
        let startupTimeout: Duration = .seconds(60)
        var engine: DeviceEngine?
        var bridge: AgentBridge?
        /// The life's end: a restart or the run's end.
        var lives = 0
        var started = false
        /// The version on screen and since when (world time), for the `contained` rule.
        var onScreen: (version: String, since: SimInstant)?
        /// Versions the device rolled back (their page failed): never on screen again.
        var rolledBack: Set<String> = []
        var restarts: [SimInstant] = []
        var verified: [String] = []
        /// The served folder, load and root state the invariants last read.
        var seen = ""
        /// Whether its download windows hold its engine's time now (nil: it has none), and
        /// how long they held it in the first 18 hours of the quiet day.
        var inWindow: (@Sendable () -> Bool)?
        /// Its engine's time (the wall clock judged against the floor of verified times,
        /// docs/device-time.md): what its reports are stamped with and held by.
        var now: (@Sendable () -> Date)?
        var windowTime: Duration = .zero
        var finished = false
        init(n: Int, layout: RootLayout, wall: SimWall, network: AgentNetwork) {
            self.n = n
            self.layout = layout
            self.wall = wall
            self.network = network
        }
    }

    let options: Options
    /// The release side: the real publisher writing the origin, the trust root; its clock is
    /// the world's.
    let release: SimRun
    var clock: SimClock { release.clock }
    let collector: SimCollector
    var devices: [Device] = []
    var outcome = Outcome()
    var events: SimRandom
    /// A release's page kind per device (absent: good).
    var kinds: [String: [Int: PageKind]] = [:]
    /// Releases and when they were published.
    var published: [(version: Version, at: SimInstant)] = []
    let faultsOn = Mutex(false)
    /// The last still moment the invariants looked at.
    var lastStill = SimInstant(offset: .zero)
    let quietStart: SimInstant
    let end: SimInstant

    let key: Ed25519.PrivateKey

    init(_ options: Options) throws {
        self.options = options
        key = try Ed25519.PrivateKey(pem: options.keyPEM)
        release = SimRun(
            SimRun.Options(
                seed: options.seed, devices: 0, days: options.days, mirrors: false, work: options.work, key: key,
                publicPEM: options.publicPEM, say: options.say))
        collector = release.network.collector
        // Every default of the process's timers (the root lock's waits among them) on the
        // world's time: a wait for a lock another task holds is a sleeper the driver wakes.
        MonotonicClock.replaceForProcess(with: MonotonicClock(release.clock))
        events = SimRandom.stream(options.seed, ["agent-events"])
        let hours = Int64(options.days * 24)
        quietStart = SimInstant(offset: .seconds((hours - min(24, hours / 2)) * 3600))
        // Half a day past the quiet day: reports that wait for company are due, and sent.
        end = SimInstant(offset: .seconds(hours * 3600 + 12 * 3600))
    }

    func say(_ line: String) {
        let text = SimRun.stamp(clock.now) + " " + SimRun.replayable(line, work: options.work)
        outcome.lines.append(text)
        options.say(text)
    }

    func violation(_ name: String, _ detail: String) {
        let line = "VIOLATION \(name): \(detail)"
        outcome.violations.append(line)
        say(line)
    }

    static let tracing = ProcessInfo.processInfo.environment["SIM_TRACE"] != nil
    static func trace(_ line: @autoclosure () -> String) {
        if tracing { FileHandle.standardError.write(Data(("trace: " + line() + "\n").utf8)) }
    }

    func kind(_ n: Int, _ version: String) -> PageKind { kinds[version]?[n] ?? .good }

    // MARK: set-up

    func publish(_ version: Version) async throws {
        var changed: Set<Int> = []
        for _ in 0..<3 { changed.insert(Int(events.next() % 12)) }
        let first = version == Version(1, 0, 0)
        let source = try release.build(version, changed: first ? Set(0..<12) : changed)
        var request = PublishRequest(
            source: source, app: SimRun.app, channel: "stable", version: version, minShellVersion: Version(1, 0, 0),
            outputDirectory: release.origin, expires: release.wallNow.addingTimeInterval(60 * 86_400), now: release.wallNow)
        request.deltaBases = 1
        // When devices that staged it switch: at once, once idle, at the next navigation, or
        // at the next start (the default); the page may ask sooner under any of them.
        let mode: ApplyMode = first ? .nextStart : [.now, .idle, .nextNavigation, .nextStart][Int(events.next() % 4)]
        if mode != .nextStart { request.apply = try ApplyPolicy(mode: mode, idleSeconds: mode == .idle ? 300 : nil) }
        _ = try await Publisher.publish(request, key: key)
        release.trees[version.description] = try SimRun.treeDigest(source)
        release.newest = version
        published.append((version, clock.now))
        outcome.releases += 1
        var bad: [String] = []
        if !first, events.chance(0.3) {
            var map: [Int: PageKind] = [:]
            for n in 0..<options.devices where events.chance(0.4) {
                let kind: PageKind = [.never, .late, .throwing][Int(events.next() % 3)]
                map[n] = kind
                bad.append("\(n) \(kind.rawValue)")
            }
            kinds[version.description] = map
        }
        say("publish \(version), apply \(mode.rawValue)" + (bad.isEmpty ? "" : " (its page fails on devices: \(bad.joined(separator: ", ")))"))
    }

    /// The site mirror copies the origin's channel (``SimRun/copyToMirror()``), told in this
    /// world's lines.
    func syncMirror() throws {
        try release.copyToMirror()
        say("mirror synced at \(release.newest)")
    }

    func setUp() async throws {
        try FileManager.default.createDirectory(atPath: release.origin, withIntermediateDirectories: true)
        try await release.writeTrustRoot()
        try await publish(Version(1, 0, 0))
        try syncMirror()
        for n in 0..<options.devices {
            var r = SimRandom.stream(options.seed, ["agent-device", "\(n)"])
            var settings = ArchiveSettings(
                channel: "stable", manifestURL: "https://origin.sim/stable/manifest.json", trustedKeys: [options.publicPEM])
            // Half the devices have the site's mirror: asked first, the origin when it fails.
            if n % 2 == 0 { settings.mirrors = ["http://mirror.sim/site/stable/manifest.json"] }
            let windows: [String] =
                switch n % 3 {
                case 1: ["04:00-05:00@UTC"]
                case 2: ["22:00-02:00@Europe/Berlin"]
                default: []
                }
            var deviceSettings = DeviceSettings(
                startupTimeoutSeconds: 60, reportURL: SimRun.collectorURL,
                labels: try DeviceLabels(["site": ["a", "b", "c"][Int(r.next() % 3)]]), downloadWindows: windows,
                downloadRate: windows.isEmpty ? nil : "4KiB/s")
            deviceSettings.errorRollback = true
            let config = try DeviceConfig(
                app: SimRun.app, channelKind: .signedArchive, settings: settings, shellVersion: Version(1, 0, 0), deviceSettings: deviceSettings)
            let layout = RootLayout(root: options.work + "/devices/\(n)")
            try await RootInitializer.write(config, to: layout, force: false, store: layout.clients)
            let text = (0..<4).map { _ in String(format: "%08x", UInt32(truncatingIfNeeded: r.next())) }.joined()
            try AtomicFile.write(Data((text + "\n").utf8), to: layout.root + "/device-id")
            let wall = SimWall(clock: clock, origin: SimRun.wallOrigin)
            let network = AgentNetwork(
                device: n, seed: options.seed, originRoot: release.origin, mirrorRoot: release.mirror, clock: clock, collector: collector,
                faults: { [self] in faultsOn.withLock { $0 } }, lastJump: { [clock] in wall.lastJump(atOrBefore: clock.now) })
            let device = Device(n: n, layout: layout, wall: wall, network: network)
            // While faults last: about one jump of its wall clock a day, and a restart of its
            // host every two or three days, at moments drawn from the seed.
            var at = Duration.seconds(3 * 3600)
            var skew = Duration.zero
            while true {
                at += .seconds(Int64(12 * 3600 + r.next() % (24 * 3600)))
                guard at < quietStart.offset else { break }
                let hours = Int64(1 + r.next() % 6)
                skew += .seconds((r.chance(0.5) ? 1 : -1) * (r.chance(0.7) ? hours * 3600 : (1 + Int64(r.next() % 2)) * 86_400))
                wall.jump(at: SimInstant(offset: at), to: skew)
                say("device \(n): its wall clock will jump to \(SimRun.span(skew)) at \(SimRun.stamp(SimInstant(offset: at)))")
            }
            var restart = Duration.seconds(5 * 3600)
            while true {
                restart += .seconds(Int64(36 * 3600 + r.next() % (36 * 3600)))
                guard restart < quietStart.offset else { break }
                device.restarts.append(SimInstant(offset: restart))
            }
            devices.append(device)
        }
        // Each root takes 1.0.0 as `clientctl install` does, before its host first starts.
        let done = SimFlag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { done.set() }
                for d in self.devices {
                    // Inside its download window: the one-hour window's devices have their
                    // wall clock read 04:30 UTC while they install, then the world's time.
                    if d.n % 3 == 1 { d.wall.jump(at: self.clock.now, to: .seconds(4 * 3600 + 1800)) }
                    let report = try await self.open(d).updater.checkForUpdates()
                    if d.n % 3 == 1 { d.wall.jump(at: self.clock.now, to: .zero) }
                    self.say("device \(d.n): installed \(report.version ?? "nothing")")
                }
            }
            // Time moves while the installs wait on it, as in the run.
            while !done.value {
                let still = await SimExecutor.shared.still()
                Self.trace(
                    "set-up: still \(still) after \(SimExecutor.shared.ran) jobs, done \(done.value), next \(String(describing: clock.nextDeadline)), sleepers \(clock.sleeperCount)"
                )
                guard still, !done.value, let next = clock.nextDeadline else { break }
                clock.advance(to: next)
            }
            try await group.waitForAll()
        }
        faultsOn.withLock { $0 = true }
    }

    /// The engine of device `d`'s next life, on the world's clocks and its network.
    func open(_ d: Device) throws -> DeviceEngine {
        var options = DeviceEngine.Options(now: { [wall = d.wall] in wall.now }, logger: SimRun.quiet)
        options.transport = d.network
        options.clock = MonotonicClock(clock)
        options.retry = RetryPolicy(maxAttempts: 3, initialDelay: .seconds(1), maxDelay: .seconds(4), jitter: 0)
        options.idleTimeout = .seconds(30)
        options.linkProbe = FixedLinkProbe()
        let jitter = SimJitter(seed: self.options.seed, device: d.n + 10_000 * d.lives)
        options.reportRandom = { jitter.next() }
        // The boot clock is the world's: a boot per life, its uptime from the life's start.
        let boot = clock.now
        let bootID = "sim-boot-\(d.n)-\(d.lives)"
        options.clockReading = { [clock, wall = d.wall] in
            ClockReading(wall: wall.now, uptime: clock.now.offset - boot.offset + .seconds(30), bootID: bootID)
        }
        return try DeviceEngine.open(d.layout, options: options)
    }

    // MARK: a device's lives

    /// Device `d` from set-up to the run's end: a life per start of its host, each ended by a
    /// restart (its task cancelled, as SIGTERM ends `serve`) or by the run's end.
    func lives(_ d: Device) async {
        while !Task.isCancelled {
            let until = d.restarts.first { $0 > clock.now }
            do {
                try await life(d, until: until)
            } catch {
                violation("start", "device \(d.n): its host did not start: \(SimRun.short("\(error)"))")
                break
            }
            guard until != nil, !Task.isCancelled else { break }
            outcome.restarts += 1
            say("device \(d.n): its host restarts")
        }
        d.finished = true
    }

    /// One life of device `d`'s host: the agent, the page and the life's end in one group.
    func life(_ d: Device, until: SimInstant?) async throws {
        let engine = try open(d)
        d.lives += 1
        d.engine = engine
        d.network.barred.withLock { $0 = Self.barred(engine) }
        d.inWindow = Self.inWindow(engine)
        d.now = engine.now
        let bridge = AgentBridge(clock: MonotonicClock(clock))
        d.bridge = bridge
        let agent = DeviceAgent(engine, bridge: bridge, checkEvery: .seconds(3600), clock: engine.monotonic)
        let control = AgentControl(agent)
        let page = SimPage(world: self, device: d, control: control, bridge: bridge, clock: clock)
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do { try await agent.run() } catch { self.say("device \(d.n): its agent ended: \(SimRun.short("\(error)"))") }
                return true
            }
            group.addTask {
                guard (try? await agent.startedUp()) != nil else { return false }
                bridge.loaded()
                await page.run()
                return false
            }
            group.addTask { [clock] in
                guard let until else {
                    // Until the run's end cancels the group.
                    try? await clock.sleep(until: SimInstant(offset: .seconds(Int64.max / 4)))
                    return false
                }
                try? await clock.sleep(until: until)
                return false
            }
            // The first to end: the life's end (or the agent's), then the rest.
            _ = await group.next()
            group.cancelAll()
            while await group.next() != nil {}
        }
        d.engine = nil
    }

    /// Whether `engine`'s download windows hold its time now; nil when it has none.
    static func inWindow(_ engine: DeviceEngine) -> (@Sendable () -> Bool)? {
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        let windows = engine.config.deviceSettings.downloadPolicy(systemZone: utc).windows
        guard !windows.isEmpty else { return nil }
        let now = engine.now
        return { windows.contains { $0.contains(now()) } }
    }

    /// Whether `engine`'s policy bars payload bytes now: the engine's own time outside its
    /// download windows, or a hold in force on its monotonic clock.
    static func barred(_ engine: DeviceEngine) -> @Sendable () -> Bool {
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        let windows = engine.config.deviceSettings.downloadPolicy(systemZone: utc).windows
        let holds = engine.downloadHolds
        let now = engine.now
        return { (!windows.isEmpty && !windows.contains { $0.contains(now()) }) || holds.current() != nil }
    }

    // MARK: the run

    func run() async throws -> Outcome {
        try await setUp()
        let executor = SimExecutor.shared
        // Publications while faults last, every 2 to 14 hours.
        var publications: [SimInstant] = []
        var at = Duration.seconds(2 * 3600)
        while true {
            at += .seconds(Int64(2 * 3600 + events.next() % (12 * 3600)))
            guard at < quietStart.offset else { break }
            publications.append(SimInstant(offset: at))
        }
        // The mirror syncs from the origin in four hours of ten, half past the hour (its own
        // stream: the publications are as they were without it), and once faults stop.
        var mirrorStream = SimRandom.stream(options.seed, ["agent-mirror"])
        var syncs = (1..<(options.days * 24)).compactMap { hour in
            mirrorStream.chance(0.4) ? SimInstant(offset: .seconds(Int64(hour) * 3600 + 1800)) : nil
        }
        syncs = (syncs + [quietStart]).sorted()
        var version = Version(1, 0, 0)
        let jobs = executor.ran
        await withTaskGroup(of: Void.self) { group in
            for d in devices { group.addTask { await self.lives(d) } }
            var liveness = false
            while true {
                guard await executor.still() else {
                    violation("rests", "the world never rested: a task ran \(SimExecutor.maxBusy) jobs without waiting on the clock")
                    break
                }
                outcome.steps += 1
                await invariants()
                if !liveness, clock.now >= quietStart.advanced(by: .seconds(24 * 3600)) {
                    liveness = true
                    await livenessInvariant()
                }
                let next =
                    [clock.nextDeadline, publications.first, syncs.first, quietStart > clock.now ? quietStart : nil, end].compactMap { $0 }.min()
                    ?? end
                if next >= end { break }
                Self.trace(
                    "step \(outcome.steps) at \(SimRun.stamp(clock.now)) +\(clock.now.duration(to: next)), \(clock.sleeperCount) sleepers, \(executor.ran) jobs"
                )
                clock.advance(to: next)
                if next == quietStart {
                    faultsOn.withLock { $0 = false }
                    say("faults stop")
                }
                if let due = publications.first, due <= clock.now {
                    publications.removeFirst()
                    version = Version(version.major, version.minor + 1, 0)
                    do { try await publish(version) } catch { violation("publish", "\(version): \(error)") }
                }
                if let due = syncs.first, due <= clock.now {
                    syncs.removeFirst()
                    do { try syncMirror() } catch { violation("mirror", "cannot sync: \(error)") }
                }
            }
            // The run's end: every host stops as SIGTERM stops it (its reports get their 2 s).
            group.cancelAll()
            while true {
                guard await executor.still() else { break }
                guard devices.contains(where: { !$0.finished }) else { break }
                guard let next = clock.nextDeadline else { break }
                clock.advance(to: next)
            }
            while await group.next() != nil {}
        }
        outcome.jobs = executor.ran - jobs
        await reportsInvariant()
        for d in devices {
            let figures = d.network.figures
            outcome.requests += figures.requests
            outcome.faults += figures.faults
        }
        return outcome
    }

    // MARK: invariants

    /// After every still moment: what is on screen is a verified release's exact tree and
    /// was never rolled back there; never dark; a failing page's release is contained; no
    /// payload byte outside a window or in a hold.
    func invariants() async {
        let since = lastStill.duration(to: clock.now)
        lastStill = clock.now
        let windowed = clock.now > quietStart && clock.now <= quietStart.advanced(by: .seconds(18 * 3600))
        for d in devices {
            if windowed, d.inWindow?() == true { d.windowTime += since }
            for breach in d.network.drainOverflow() { violation("window-or-hold", breach) }
            guard let bridge = d.bridge else { continue }
            guard d.engine != nil, let path = bridge.path else { continue }
            // What the page would load now: read again when the host served another folder or
            // reloaded, or when the root changed (files could go under a served folder).
            let stamp = Self.stamp(d.layout.root + "/state.json")
            let seen = "\(path) \(bridge.generation) \(stamp)"
            let version: String
            if seen == d.seen, let screen = d.onScreen?.version {
                version = screen
            } else {
                guard let html = FileManager.default.contents(atPath: path + "/index.html"), let text = String(data: html, encoding: .utf8),
                    let read = Self.version(inPage: text)
                else {
                    if d.started { violation("never-dark", "device \(d.n) serves nothing readable at \(path)") }
                    continue
                }
                version = read
            }
            d.started = true
            if d.onScreen?.version != version {
                if let was = d.onScreen?.version, kind(d.n, was) != .good, Version(was) ?? Version(0, 0, 0) > Version(version) ?? Version(0, 0, 0) {
                    outcome.rollbacks += 1
                    say("device \(d.n): \(was) rolled back to \(version)")
                }
                if d.rolledBack.contains(version) { violation("blacklisted", "device \(d.n) serves \(version), which it blacklisted") }
                d.onScreen = (version, clock.now)
            }
            if let screen = d.onScreen {
                let kind = kind(d.n, screen.version)
                let served = clock.now.offset - screen.since.offset
                let bound: Duration? =
                    switch kind {
                    case .good: nil
                    case .never, .late: d.startupTimeout + .seconds(120)
                    case .throwing: .seconds(2 * 3600)
                    }
                if let bound, served > bound {
                    violation(
                        "contained", "device \(d.n) has served \(screen.version), whose page \(kind.rawValue), for \(Int(served.inSeconds)) s")
                    d.onScreen?.since = clock.now  // said once per bound
                }
            }
            guard seen != d.seen else { continue }
            d.seen = seen
            guard let status = try? await d.engine?.updater.status(), case .installed(let current) = status.current else { continue }
            // A version the device blacklisted (its second failed trial, or its page's errors)
            // never comes back on screen there.
            for entry in status.installed where entry.blacklisted { d.rolledBack.insert(entry.version) }
            let held = [current, status.pending, status.lastKnownGood].compactMap { $0 }
            guard held != d.verified else { continue }
            d.verified = held
            for version in held {
                guard let expected = release.trees[version] else {
                    violation("verified", "device \(d.n) holds \(version), which was never published")
                    continue
                }
                guard let found = try? SimRun.treeDigest(d.layout.clients + "/v" + version) else {
                    violation("kept", "device \(d.n): the files of \(version) (running, pending or last good) are gone")
                    continue
                }
                if found != expected { violation("verified", "device \(d.n): clients/v\(version) differs from release \(version)") }
            }
        }
    }

    /// A day after faults stop: every device runs the newest release when its page works
    /// there, and a release whose page works when it does not; a device with download
    /// windows only when they held its time (its wall clock as the engine judges it, which a
    /// jump may have set days back) for an hour or more in the quiet day's first 18 hours.
    func livenessInvariant() async {
        guard let newest = published.last(where: { $0.at < quietStart })?.version.description else { return }
        for d in devices {
            if d.inWindow != nil, d.windowTime < .seconds(3600) {
                say("device \(d.n): its windows held its time for \(Int(d.windowTime.inSeconds)) s of the quiet day: not judged")
                continue
            }
            let screen = d.onScreen?.version ?? "nothing"
            if kind(d.n, newest) == .good {
                if screen != newest {
                    violation("liveness", "device \(d.n) serves \(screen) a day after faults stopped, not \(newest), whose page works there")
                }
            } else if kind(d.n, screen) != .good {
                violation("liveness", "device \(d.n) serves \(screen), whose page fails there, a day after faults stopped")
            }
        }
    }

    /// After the run: every report each device's journal gave out reached the collector once,
    /// by the agents' own deliveries; none is left pending.
    func reportsInvariant() async {
        for problem in collector.drainProblems() { violation("reports", problem) }
        for d in devices {
            let journal = ReportJournal(layout: d.layout, now: { [wall = d.wall] in wall.now })
            let status = journal.status
            // Reports that may wait for company (docs/fleet-reports.md) wait up to 12 hours of
            // the device's time: those still within it are the next batch's, not lost.
            let pending = journal.pending(maxReports: 100_000, maxBytes: Int.max)
            let now = d.now?() ?? d.wall.now
            let held = ReportDeliverySchedule.heldUntil(pending, now: now, hold: ReportDeliverySchedule.Tuning().hold) != nil
            if status.pending > 0, !held {
                violation("reports", "device \(d.n): \(status.pending) reports are still in its journal, not held for company")
            }
            let waiting = held ? Set(pending.map(\.seq)) : []
            guard let id = try? DeviceIdFile.readOrCreate(d.layout) else { continue }
            let streams = collector.seqs(device: id.description)
            let stored = streams[journal.stream()] ?? []
            let missing = status.lastSeq > 0 ? (Int64(1)...status.lastSeq).filter { !stored.contains($0) && !waiting.contains($0) } : []
            if !missing.isEmpty {
                violation("reports", "device \(d.n): \(missing.count) of its \(status.lastSeq) reports never reached the collector")
            }
            if streams.count > 1 { violation("reports", "device \(d.n) sent reports in \(streams.count) streams") }
        }
        outcome.reports = collector.figures.stored
        outcome.reportDuplicates = collector.figures.duplicates
    }

    /// A file's identity and change time, to tell whether it was replaced.
    static func stamp(_ path: String) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { return "-" }
        return "\(st.st_ino) \(st.st_mtim.tv_sec) \(st.st_mtim.tv_nsec) \(st.st_size)"
    }

    /// The version a client's page names (`<p id=version>…</p>`).
    static func version(inPage text: String) -> String? {
        guard let open = text.range(of: "<p id=version>"), let close = text.range(of: "</p>", range: open.upperBound..<text.endIndex) else {
            return nil
        }
        return String(text[open.upperBound..<close.lowerBound])
    }
}

/// The host's web view as the agent sees it: where it serves from, and its reloads. The
/// page (``SimPage``) reads each load from it.
final class AgentBridge: HostBridge, Sendable {
    private struct State {
        var path: String?
        var generation = 0
    }
    private let state = Mutex(State())
    let signal: WakeSignal

    init(clock: MonotonicClock) { signal = WakeSignal(clock: clock) }

    func setServerBasePath(_ path: String) async throws {
        state.withLock { $0.path = path }
    }

    func reload() async throws { loaded() }

    /// A load: the first once start-up chose what to serve, a reload, the page's own reload.
    func loaded() {
        state.withLock { $0.generation += 1 }
        signal.wake()
    }

    var path: String? { state.withLock { $0.path } }
    var generation: Int { state.withLock { $0.generation } }
}

/// A flag set once, read by the world's driver.
final class SimFlag: Sendable {
    private let state = Mutex(false)
    var value: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}

// fleet-bench: the Swift half of Scripts/bench/fleet (BENCHMARKS.md "Fleet" and "Fleet
// reports and the rollout guard").
//
//   fleet-bench WORK BASE_URL ACCESS_LOG [--devices N] [--interval S] [--hours H] [--concurrency C]
//       [--scenario rollout|all-fail|subset-fail|background] [--seed N] [--quiet-hours H]
//       [--collector URL --token-file FILE --clientctl PATH] [--guard auto|clientctl|stand-in|off]
//       [--guard-key PEM] [--guard-every S] [--max-failure-rate P] [--min-devices N]
//       [--background-rate R] [--ack-delay S] [--attack pull|cut --attack-ids N --admin-token-file FILE]
//
// WORK/releases is the release folder nginx serves at BASE_URL and logs to ACCESS_LOG
// ("$status $body_bytes_sent $uri" per line). Device roots go to WORK/devices. Simulated
// time: the clock starts at real now (rounded down to the hour), so that what is signed in
// real time (a restriction's expiry) holds over the simulated days. Every device is a
// library Updater whose clock is the simulation's, checking every S seconds ± 25 % (uniform
// jitter, first check at a random offset), as a host without `serve` would: `install`, and
// when a version was staged, `reload` (a trial timed on the wall clock, here the simulated
// one), then `ack` a few seconds later (a healthy device) or nothing, the next command after
// the startup timeout (`gc`) failing the trial (a failing device). Then it delivers its
// journal to the collector (`--collector`), as `install` and `ack` do before they exit.
//
// Timeline: warm-up (1.0.0 installed, tried and acknowledged everywhere), then
// `--quiet-hours` of routine checks (heartbeats only), then at T0 1.1.0 with a 3-step
// rollout (0 h: 5 %, 24 h: 25 %, 48 h: 100 %) for `--hours`. Scenario `rollout`: a healthy
// release, paused at T0+46 h and resumed at T0+54 h (the 100 % step falls inside the
// pause). `all-fail`: 1.1.0 fails on every device; `subset-fail`: on devices whose id's
// first byte is below 0x33 (19.9 % of ids: a hardware class); `background`: on a seeded
// random `--background-rate` of devices. With a collector, the rollout guard runs every
// `--guard-every` simulated seconds (default 900) from T0 until it halts the release.
// `--attack`: the collector runs `manual` admission, every device's key is admitted after
// the warm-up, and an attacker holding device 0's key posts batches for `--attack-ids`
// invented ids right after the release (GuardAttacker.swift): rollbacks (`pull`) or commits
// (`cut`) of it.
//
// Prints one JSON object: the fraction updated per simulated hour, the expected step, the
// share of devices whose place the step admits, origin requests and bytes per check, and
// with a collector the reports and their bytes per phase, the guard's runs, the exposure
// and the comparison of the collector's fleet summary with the simulation's own counts.
import ArchivePublishing
import ClientEngine
import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import SignedArchive
import SignedManifest
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("fleet-bench: \(message)\n".utf8))
    exit(64)
}

@Sendable func log(_ message: String) { FileHandle.standardError.write(Data("fleet-bench: \(message)\n".utf8)) }

enum Scenario: String {
    case rollout
    case allFail = "all-fail"
    case subsetFail = "subset-fail"
    case background
    /// 1.1.0 starts everywhere and throws on `--error-rate` of its page loads.
    case errors
    /// Every version throws on `--background-error-rate` of its loads, 1.1.0 no more.
    case errorsBackground = "errors-background"

    var countsErrors: Bool { self == .errors || self == .errorsBackground }
}

var args = Array(CommandLine.arguments.dropFirst())
guard args.count >= 3 else { fail("usage: fleet-bench WORK BASE_URL ACCESS_LOG [options] (see Benchmarks/fleet-bench/main.swift)") }
let work = args.removeFirst()
let baseURL = args.removeFirst()
let accessLog = args.removeFirst()
var devices = 1000
var interval = 3600.0
var hours = 72
var concurrency = 8
var seed: UInt64 = 1
var quietHours = 0
var guardEvery = 900.0
var backgroundRate = 0.01
var ackDelay = 3.0
var scenario = Scenario.rollout
var collectorArgument: String?
var tokenFile = ""
var clientctlPath = ""
var guardMode = "auto"
var guardKey = ""
var maxFailureRate = "0.1"
var minDevices = "20"
var attackMode: GuardAttacker.Mode?
var attackIds = 100
var adminTokenFile = ""
var errorRate = 0.3
var backgroundErrorRate = 0.02
var loadsPerHour = 4.0
var maxErrorIncrease = ""
while !args.isEmpty {
    let flag = args.removeFirst()
    guard let text = args.first else { fail("\(flag) needs a value") }
    args.removeFirst()
    switch flag {
    case "--scenario":
        guard let s = Scenario(rawValue: text) else {
            fail("--scenario: rollout, all-fail, subset-fail, background, errors or errors-background, not \(text)")
        }
        scenario = s
    case "--collector": collectorArgument = text
    case "--token-file": tokenFile = text
    case "--clientctl": clientctlPath = text
    case "--guard": guardMode = text
    case "--guard-key": guardKey = text
    case "--max-failure-rate": maxFailureRate = text
    case "--min-devices": minDevices = text
    case "--attack":
        guard let mode = GuardAttacker.Mode(rawValue: text) else { fail("--attack: pull or cut, not \(text)") }
        attackMode = mode
    case "--admin-token-file": adminTokenFile = text
    case "--max-error-increase": maxErrorIncrease = text
    default:
        guard let value = Double(text) else { fail("\(flag) needs a number") }
        switch flag {
        case "--devices": devices = Int(value)
        case "--interval": interval = value
        case "--hours": hours = Int(value)
        case "--concurrency": concurrency = Int(value)
        case "--seed": seed = UInt64(max(0, value))
        case "--quiet-hours": quietHours = Int(value)
        case "--guard-every": guardEvery = value
        case "--background-rate": backgroundRate = value
        case "--ack-delay": ackDelay = value
        case "--attack-ids": attackIds = Int(value)
        case "--error-rate": errorRate = value
        case "--background-error-rate": backgroundErrorRate = value
        case "--loads-per-hour": loadsPerHour = value
        default: fail("unknown option \(flag)")
        }
    }
}
let ackDelaySeconds = ackDelay
let collectorURL = collectorArgument.flatMap { URL(string: $0) }
if collectorArgument != nil, collectorURL == nil { fail("--collector: not a URL") }

// Benchmarks/fleet-bench/main.swift → the package root.
let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
let keyPEM = (try? String(contentsOfFile: package + "/Keys/test-signing.pem", encoding: .utf8)) ?? ""
let publicPEM = (try? String(contentsOfFile: package + "/Keys/test-signing.pub.pem", encoding: .utf8)) ?? ""
guard let key = try? Ed25519.PrivateKey(pem: keyPEM) else { fail("cannot read Keys/test-signing.pem") }

// Simulated time starts at real now (rounded down to the hour): the warm-up, then the quiet
// hours, an hour's gap, then T0, the release.
let simStartTime = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 3600).rounded(.down) * 3600)
let t0 = simStartTime.addingTimeInterval(Double(quietHours + 1) * 3600)
let releases = work + "/releases"
let app = "com.example.notes"
let release = "1.1.0"

/// A small client of `version` (index.html + a 20 KB script).
func build(_ version: String) throws -> String {
    let dir = work + "/build-\(version)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    try Data("<!doctype html><title>notes</title><p id=version>\(version)</p><script src=app.js></script>".utf8)
        .write(to: URL(fileURLWithPath: dir + "/index.html"))
    try Data(String(repeating: "console.log('notes \(version)');\n", count: 640).utf8).write(to: URL(fileURLWithPath: dir + "/app.js"))
    return dir
}

func publish(_ version: String, rollout: Rollout?, at now: Date) async throws {
    var request = PublishRequest(
        source: try build(version), app: app, channel: "stable", version: Version(version) ?? Version(0, 0, 1),
        minShellVersion: Version(1, 0, 0), outputDirectory: releases, expires: now.addingTimeInterval(7 * 86_400), now: now)
    request.rollout = rollout
    _ = try await Publisher.publish(request, key: key)
}

// The fleet: roots made as `clientctl init [--report-url URL]` makes them.
let deviceFolder = work + "/devices"
let config: DeviceConfig
do {
    var made = try DeviceConfig(
        app: app, channelKind: .signedArchive,
        settings: ArchiveSettings(channel: "stable", manifestURL: baseURL + "/stable/manifest.json", trustedKeys: [publicPEM]),
        shellVersion: Version(1, 0, 0), deviceSettings: DeviceSettings(startupTimeoutSeconds: 60))
    if let collectorArgument {
        if let problem = DeviceConfig.reportURLProblem(collectorArgument, allowInsecureHTTP: false) { fail("--collector: \(problem)") }
        made.reportURL = collectorArgument
    }
    config = made
    try await publish("1.0.0", rollout: nil, at: simStartTime.addingTimeInterval(-3600))
    for n in 0..<devices {
        let layout = RootLayout(root: deviceFolder + "/\(n)")
        try await RootInitializer.write(config, to: layout, force: false, store: layout.clients)
    }
} catch {
    fail("setup: \(error)")
}

let deviceIDs = (0..<devices).map { n in
    guard let id = DeviceIdFile.read(RootLayout(root: deviceFolder + "/\(n)")) else { fail("device \(n) has no id") }
    return id
}
let deviceIds = deviceIDs.map(\.text)

// Which devices 1.1.0 fails on (its trial is never acknowledged there).
var random = SeededRandom(seed: seed)
let failing: [Bool] = deviceIds.map { id in
    switch scenario {
    case .rollout, .errors, .errorsBackground: return false
    case .allFail: return true
    case .subsetFail: return (UInt8(id.prefix(2), radix: 16) ?? 0xFF) < 0x33
    case .background: return Double.random(in: 0..<1, using: &random) < backgroundRate
    }
}

// Errors after start: every version throws on the background share of its loads, 1.1.0 on
// `--error-rate` in the `errors` scenario.
let (releaseThrows, otherThrows) = (scenario == .errors ? errorRate : backgroundErrorRate, backgroundErrorRate)
let pageUse: PageUse? =
    scenario.countsErrors
    ? PageUse(devices: devices, seed: seed, loadsPerHour: loadsPerHour, start: simStartTime) { $0 == release ? releaseThrows : otherThrows }
    : nil

let downloader = Downloader(
    transport: DefaultTransport(), retry: RetryPolicy(maxAttempts: 3, initialDelay: .zero, maxDelay: .zero), idleTimeout: .seconds(30))
let traffic = ReportTraffic()
let reportTransport = CountingTransport(inner: DefaultTransport(), traffic: traffic)

/// What the simulation knows happened, per version: distinct devices, as the collector counts.
struct Truth: Sendable {
    var installs: [String: Set<Int>] = [:]
    var trials: [String: Set<Int>] = [:]
    var commits: [String: Set<Int>] = [:]
    var rollbacks: [String: Set<Int>] = [:]
    var blacklists: [String: Set<Int>] = [:]
}

final class Tally: Sendable {
    private struct Counts {
        var updatedAt: [Int: Double] = [:]
        var checks = 0
        var failures = 0
        var truth = Truth()
        var reports: [String: Int] = [:]
        var deliveryFailures = 0
        var heldDevices = 0
        var heldReports = 0
        var firstDeliveryFailure: String?
        var operationFailures = 0
    }
    private let counts = Mutex(Counts())
    func record(_ n: Int, _ report: InstallReport?, hour: Double) {
        counts.withLock { counts in
            counts.checks += 1
            guard let report else {
                counts.failures += 1
                return
            }
            if report.result == .installed, let version = report.version {
                counts.truth.installs[version, default: []].insert(n)
                if version == release { counts.updatedAt[n] = hour }
            }
        }
    }
    func trial(_ n: Int, _ version: String) { counts.withLock { _ = $0.truth.trials[version, default: []].insert(n) } }
    func commit(_ n: Int, _ version: String) { counts.withLock { _ = $0.truth.commits[version, default: []].insert(n) } }
    func rollback(_ n: Int, _ version: String, blacklisted: Bool) {
        counts.withLock { c in
            c.truth.rollbacks[version, default: []].insert(n)
            if blacklisted { c.truth.blacklists[version, default: []].insert(n) }
        }
    }
    func operationFailed() { counts.withLock { $0.operationFailures += 1 } }
    func delivered(_ count: Int, phase: String) { counts.withLock { $0.reports[phase, default: 0] += count } }
    func heldAtEnd(_ count: Int) {
        counts.withLock { c in
            c.heldDevices += 1
            c.heldReports += count
        }
    }
    var held: (devices: Int, reports: Int) { counts.withLock { ($0.heldDevices, $0.heldReports) } }
    func deliveryFailed(_ why: String) {
        counts.withLock { c in
            c.deliveryFailures += 1
            if c.firstDeliveryFailure == nil { c.firstDeliveryFailure = why }
        }
    }
    var snapshot: (updated: Int, checks: Int, failures: Int) { counts.withLock { ($0.updatedAt.count, $0.checks, $0.failures) } }
    var truth: Truth { counts.withLock { $0.truth } }
    var reports: [String: Int] { counts.withLock { $0.reports } }
    var delivery: (failures: Int, first: String?, operations: Int) {
        counts.withLock { ($0.deliveryFailures, $0.firstDeliveryFailure, $0.operationFailures) }
    }
}
let tally = Tally()

/// Device `n`'s updater at simulated time `time` (a one-shot command's, as `clientctl` makes it).
@Sendable func updater(_ n: Int, at time: Date) throws -> Updater {
    let layout = RootLayout(root: deviceFolder + "/\(n)")
    let channel = try ArchiveChannel(layout: layout, config: config, downloader: downloader, now: { time })
    return Updater(layout: layout, config: config, channel: channel, now: { time })
}

/// One check of device `n` at simulated time `at`: the report's result and version.
@Sendable func check(_ n: Int, at time: Date) async -> InstallReport? {
    do {
        return try await updater(n, at: time).install()
    } catch {
        log("device \(n) at T0+\(Int(time.timeIntervalSince(t0)))s: \(error)")
        return nil
    }
}

/// Delivers device `n`'s journal at simulated time `time`, as `install` and `ack` do before
/// they exit: the library's sender (`ReportSender`, as `DeviceEngine.reportSender` builds it)
/// on the root's journal, signed with the root's device key (made at its first delivery, as
/// a root made before device keys gets it), within 3 s.
/// `atEnd`: the last delivery of the run, where held reports are counted, not sent.
@Sendable func deliver(_ n: Int, at time: Date, phase: String, atEnd: Bool = false) async {
    guard let collectorURL else { return }
    let layout = RootLayout(root: deviceFolder + "/\(n)")
    var options = ReportSender.Options()
    options.now = { time }
    let sender = ReportSender(
        source: ReportJournal(layout: layout, now: { time }), identity: ReportIdentity(device: deviceIDs[n], app: app, channel: "stable"),
        url: collectorURL, transport: reportTransport, options: options, refusalFile: layout.root + "/" + ReportSender.refusalFileName,
        signer: try? DeviceKey.readOrCreate(layout))
    for attempt in await sender.flush(within: .seconds(3)) {
        switch attempt {
        case .delivered(let count, _, _): tally.delivered(count, phase: phase)
        case .failed(_, let why), .dropped(_, let why): tally.deliveryFailed(why)
        case .nothingPending: break
        case .held:
            // Reports that can wait (heartbeats, rollout waits) wait for company: at most
            // one more request per device, after the run.
            if atEnd { tally.heldAtEnd(ReportJournal(layout: layout, now: { time }).pending(maxReports: 2_000, maxBytes: 1 << 20).count) }
        }
    }
}

/// One event of device `n` at simulated time `time`: a check; when it staged a version, the
/// switch to it and its trial (acknowledged after `ackDelay`, or failed by the next command
/// after the startup timeout when the version fails on this device); then delivery.
@Sendable func deviceEvent(_ n: Int, at time: Date) async {
    let phase = time < simStartTime.addingTimeInterval(1) ? "warm-up" : time < t0 ? "quiet" : "release"
    let layout = RootLayout(root: deviceFolder + "/\(n)")
    pageUse?.advance(n, until: time.timeIntervalSince(simStartTime), layout: layout)
    let report = await check(n, at: time)
    tally.record(n, report, hour: time.timeIntervalSince(t0) / 3600)
    var last = time
    if let report, report.result == .installed || report.result == .staged, let pending = report.pending {
        do {
            let switched = try await updater(n, at: time).reload()
            if switched.trial == pending { tally.trial(n, pending) }
            if pending == release, failing[n] {
                // Never acknowledged: the next command after the timeout fails the trial.
                last = time.addingTimeInterval(Double(config.startupTimeoutSeconds) + 1)
                let after = try await updater(n, at: last).collectGarbage()
                if after.failed == pending { tally.rollback(n, pending, blacklisted: after.blacklist.contains(pending)) }
            } else {
                last = time.addingTimeInterval(ackDelaySeconds)
                let acked = try await updater(n, at: last).startupDidComplete(version: pending)
                if acked.lastKnownGood == pending, acked.trial == nil {
                    tally.commit(n, pending)
                    pageUse?.acknowledged(n, version: pending, at: last.timeIntervalSince(simStartTime), layout: layout)
                }
            }
        } catch {
            tally.operationFailed()
            log("device \(n) at T0+\(Int(time.timeIntervalSince(t0)))s: trial of \(pending): \(error)")
        }
    }
    await deliver(n, at: last, phase: phase)
}

/// The end of a period of use of device `n`'s page at `time`: its report, then delivery.
@Sendable func useTick(_ n: Int, at time: Date) async {
    let phase = time < t0 ? "quiet" : "release"
    pageUse?.advance(n, until: time.timeIntervalSince(simStartTime), layout: RootLayout(root: deviceFolder + "/\(n)"))
    await deliver(n, at: time, phase: phase)
}

/// Runs `work` for every item, `concurrency` at a time.
func concurrently<T: Sendable>(_ items: [T], limit: Int, _ body: @escaping @Sendable (T) async -> Void) async {
    await withTaskGroup(of: Void.self) { group in
        var next = 0
        for _ in 0..<min(limit, items.count) {
            let item = items[next]
            next += 1
            group.addTask { await body(item) }
        }
        while await group.next() != nil, next < items.count {
            let item = items[next]
            next += 1
            group.addTask { await body(item) }
        }
    }
}

/// Lines of the access log so far: (status, bytes, uri).
func logLines() -> [(Int, Int, String)] {
    let text = (try? String(contentsOfFile: accessLog, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { line in
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count == 3, let status = Int(parts[0]), let bytes = Int(parts[1]) else { return nil }
        return (status, bytes, String(parts[2]))
    }
}

// Warm-up (not counted as checks of the rollout): every device installs 1.0.0, tries it and
// acknowledges it at the start of simulated time.
let warmStart = Date()
await concurrently(Array(0..<devices), limit: concurrency) { n in await deviceEvent(n, at: simStartTime) }
log("warm-up: \(devices) devices on 1.0.0 in \(String(format: "%.1f", Date().timeIntervalSince(warmStart))) s")
// With an attacker: a provisioned fleet, every device's key admitted (manual admission).
var attacker: GuardAttacker?
if let attackMode, let collectorArgument {
    do {
        let roots = (0..<devices).map { deviceFolder + "/\($0)" }
        let admitted = try admitFleet(
            clientctl: clientctlPath, collector: collectorArgument, adminToken: adminTokenFile, roots: roots, stderrFile: work + "/admit-stderr.log")
        log("admitted \(admitted) device keys")
        attacker = GuardAttacker(
            mode: attackMode, ids: attackIds, key: try GuardAttacker.stolenKey(root: roots[0]), collector: collectorArgument, app: app,
            channel: "stable", release: release, work: work)
    } catch {
        fail("attack setup: \(error)")
    }
}
var attackStatuses: [Int: Int] = [:]
let warmLines = logLines().count
let warmChecks = tally.snapshot.checks

// The schedule of checks (seconds from T0): each device at a random offset, then every
// interval ± 25 %, from the quiet hours on.
var events: [(time: Double, device: Int)] = []
for n in 0..<devices {
    var t = -Double(quietHours) * 3600 + Double.random(in: 0..<interval, using: &random)
    while t < Double(hours) * 3600 {
        events.append((t, n))
        t += interval * Double.random(in: 0.75...1.25, using: &random)
    }
}
events.sort { $0.time < $1.time }

let rollout = Rollout(start: t0, steps: [.init(seconds: 0, percent: 5), .init(seconds: 86_400, percent: 25), .init(seconds: 172_800, percent: 100)])
let pauseAt = 46.0 * 3600
let resumeAt = 54.0 * 3600

/// Runs the checks before `end` (seconds from T0) in simulated-time order, `concurrency` at a time.
var index = 0
@MainActor func runChecks(before end: Double) async {
    var batch: [(time: Double, device: Int)] = []
    while index < events.count, events[index].time < end {
        batch.append(events[index])
        index += 1
    }
    // Ends of periods of use (errors after start), from seconds since the start to seconds from T0.
    let t0Offset = t0.timeIntervalSince(simStartTime)
    let ticks = (pageUse?.ticks(before: end + t0Offset) ?? []).map { (time: $0.time - t0Offset, device: $0.device, tick: true) }
    // One device's events in time order, devices side by side.
    let all = (batch.map { (time: $0.time, device: $0.device, tick: false) } + ticks).sorted { $0.time < $1.time }
    let byDevice = Dictionary(grouping: all, by: \.device).map { $0.value }
    await concurrently(byDevice, limit: concurrency) { list in
        for e in list {
            if e.tick {
                await useTick(e.device, at: t0.addingTimeInterval(e.time))
            } else {
                await deviceEvent(e.device, at: t0.addingTimeInterval(e.time))
            }
        }
    }
}

// The quiet hours: routine checks, nothing to install (heartbeats only).
traffic.phase = "quiet"
var phaseLines: [(String, Int, Int)] = []  // (phase, log line count at start, checks at start)
if quietHours > 0 { phaseLines.append(("quiet", warmLines, warmChecks)) }
let quietStart = Date()
await runChecks(before: 0)
let quietSeconds = Date().timeIntervalSince(quietStart)
if quietHours > 0 { log("quiet: \(quietHours) h in \(String(format: "%.0f", quietSeconds)) s") }

traffic.phase = "release"
do { try await publish(release, rollout: rollout, at: t0) } catch { fail("publish \(release): \(error)") }

// Which devices each step admits, from their ids (what the simulation must reproduce).
let places = deviceIds.map { Rollout.bucket(channel: "stable", version: release, deviceId: $0) }
/// The share of devices whose place is below `percent` × 100 (the rollout's admission rule).
func admittedShare(_ percent: Double, places: [Int]) -> Double {
    Double(places.filter { $0 < Int((percent * 100).rounded()) }.count) / Double(places.count) * 100
}

// The guard: the built `clientctl rollout guard`, else (auto) the stand-in from `fleet status`
// and `rollout restrict`; off without a collector and in the `rollout` scenario by default.
let guardSetup = GuardSetup(
    clientctl: clientctlPath, app: app, channel: "stable", release: release, releases: releases, collector: collectorArgument ?? "",
    tokenFile: tokenFile, key: guardKey, maxFailureRate: maxFailureRate, minDevices: minDevices, stderrFile: work + "/guard-stderr.log",
    maxErrorIncrease: maxErrorIncrease)
var guardUsed = collectorURL == nil || clientctlPath.isEmpty || guardKey.isEmpty ? "off" : guardMode
if guardUsed == "auto" { guardUsed = scenario == .rollout ? "off" : "clientctl" }
var guardRuns: [[String: Any]] = []
var haltedAt: Double?
var guardFailure: String?
/// One run of the guard at `seconds` from T0; switches to the stand-in when the real one
/// is absent (auto), stops guarding when it fails otherwise.
@MainActor func guardStep(at seconds: Double) {
    guard guardUsed != "off", haltedAt == nil else { return }
    var (verdict, output) = guardUsed == "stand-in" ? runStandInGuard(guardSetup) : runRolloutGuard(guardSetup)
    if case .failed(let why) = verdict, guardUsed == "clientctl", guardMode == "auto", guardRuns.isEmpty {
        log("\(why) (not landed?): using the stand-in guard (fleet status + rollout restrict --pause)")
        guardUsed = "stand-in"
        (verdict, output) = runStandInGuard(guardSetup)
    }
    var run: [String: Any] = ["seconds": seconds, "output": output]
    switch verdict {
    case .holds: run["verdict"] = "holds"
    case .halted:
        run["verdict"] = "halted"
        haltedAt = seconds
        log("guard halted \(release) at T0+\(String(format: "%.2f", seconds / 3600)) h: \(output)")
    case .failed(let why):
        run["verdict"] = "failed"
        guardFailure = why
        log("guard: \(why): \(output); guarding stops")
        guardUsed = "off"
    }
    guardRuns.append(run)
}

var samples: [[String: Any]] = []
var edits: [(Double, String)] = scenario == .rollout ? [(pauseAt, "pause"), (resumeAt, "resume")] : []
let simStart = Date()
phaseLines.append(("rollout", logLines().count, tally.snapshot.checks))
let windows = Int((Double(hours) * 3600 / guardEvery).rounded(.up))
for w in 1...windows {
    let end = min(Double(w) * guardEvery, Double(hours) * 3600)
    // Edits take effect at their simulated time, between windows of checks.
    while let edit = edits.first, edit.0 < end {
        await runChecks(before: edit.0)
        do {
            _ = try await ChannelEditor.apply(
                edit.1 == "pause" ? .pause : .resume, releases: releases, channel: "stable", signers: [key], now: t0.addingTimeInterval(edit.0),
                expires: t0.addingTimeInterval(7 * 86_400))
        } catch {
            fail("\(edit.1): \(error)")
        }
        phaseLines.append((edit.1 == "pause" ? "paused" : "resumed", logLines().count, tally.snapshot.checks))
        edits.removeFirst()
    }
    await runChecks(before: end)
    if let attacker, w == 1 {
        do {
            attackStatuses = try attacker.attack(at: t0.addingTimeInterval(end - 60))
            log("attack (\(attacker.mode.rawValue), \(attacker.ids) invented ids signed with device 0's key): \(attackStatuses)")
        } catch {
            fail("attack: \(error)")
        }
    }
    guardStep(at: end)
    guard end.truncatingRemainder(dividingBy: 3600) == 0 || end == Double(hours) * 3600 else { continue }
    let hour = Int((end / 3600).rounded(.up))
    let now = t0.addingTimeInterval(end)
    let paused = end > pauseAt && end <= resumeAt && scenario == .rollout
    let s = tally.snapshot
    let exposed = tally.truth.trials[release]?.count ?? 0
    samples.append([
        "hour": hour, "updatedPercent": Double(s.updated) / Double(devices) * 100, "stepPercent": rollout.percent(at: now),
        "paused": paused, "checks": s.checks, "exposedPercent": Double(exposed) / Double(devices) * 100,
        "halted": haltedAt.map { $0 <= end } ?? false,
    ])
    if hour % 12 == 0 {
        log(
            "T0+\(hour) h: \(s.updated) of \(devices) updated, \(exposed) ran \(release), \(s.checks) checks (\(String(format: "%.0f", Date().timeIntervalSince(simStart))) s)"
        )
    }
}
phaseLines.append(("end", logLines().count, tally.snapshot.checks))
let simulationSeconds = Date().timeIntervalSince(simStart)

// Whatever a device could not deliver yet (a failed attempt) goes now, at the end's time.
await concurrently(Array(0..<devices), limit: concurrency) { n in
    await deliver(n, at: t0.addingTimeInterval(Double(hours) * 3600), phase: "release", atEnd: true)
}

// Origin traffic per phase: requests, 304s and bytes per check.
let lines = logLines()
var phases: [[String: Any]] = []
for (k, phase) in phaseLines.dropLast().enumerated() {
    let next = phaseLines[k + 1]
    let slice = lines[phase.1..<next.1]
    let checks = max(1, next.2 - phase.2)
    let manifest = slice.filter { $0.2.hasSuffix("/manifest.json") }
    phases.append([
        "phase": phase.0, "checks": checks, "requests": slice.count, "requestsPerCheck": Double(slice.count) / Double(checks),
        "manifest304": manifest.filter { $0.0 == 304 }.count, "manifest200": manifest.filter { $0.0 == 200 }.count,
        "archive200": slice.filter { $0.2.hasSuffix(".tar.gz") && $0.0 == 200 }.count,
        "other": slice.filter { !$0.2.hasSuffix("/manifest.json") && !$0.2.hasSuffix(".tar.gz") }.count,
        "bytes": slice.reduce(0) { $0 + $1.1 }, "bytesPerCheck": Double(slice.reduce(0) { $0 + $1.1 }) / Double(checks),
    ])
}

/// `value`, or JSON's null.
func orNull(_ value: Any?) -> Any { value ?? NSNull() }

var result: [String: Any] = [
    "scenario": scenario.rawValue, "seed": Int(seed), "devices": devices, "intervalSeconds": interval, "hours": hours,
    "quietHours": quietHours, "checks": tally.snapshot.checks, "failures": tally.snapshot.failures, "simulationSeconds": simulationSeconds,
    "quietSeconds": quietSeconds,
    "admittedPercent": ["5": admittedShare(5, places: places), "25": admittedShare(25, places: places), "100": admittedShare(100, places: places)],
    "pauseHour": pauseAt / 3600, "resumeHour": resumeAt / 3600, "samples": samples, "phases": phases,
    "failingDevices": failing.filter { $0 }.count,
]
if scenario.countsErrors {
    result["pageErrors"] =
        [
            "releaseThrowRate": releaseThrows, "otherThrowRate": otherThrows, "loadsPerHour": loadsPerHour,
            "maxErrorIncrease": maxErrorIncrease,
        ] as [String: Any]
}
if let attacker {
    result["attack"] = [
        "mode": attacker.mode.rawValue, "ids": attacker.ids,
        "statuses": Dictionary(uniqueKeysWithValues: attackStatuses.map { (String($0.key), $0.value) }),
    ]
}

// Reports: what was delivered and what it cost, per phase.
if collectorURL != nil {
    let counts = traffic.counts
    let delivered = tally.reports
    let days: [String: Double] = ["quiet": Double(quietHours) / 24, "release": Double(hours) / 24]
    result["reports"] = ["warm-up", "quiet", "release"].compactMap { phase -> [String: Any]? in
        let c = counts[phase] ?? TrafficCount()
        let perDevicePerDay = days[phase].flatMap { $0 > 0 ? Double(devices) * $0 : nil }
        return [
            "phase": phase, "reports": delivered[phase] ?? 0, "requests": c.requests, "bytes": c.bytes, "bodyBytes": c.bodyBytes,
            "reportsPerDevicePerDay": orNull(perDevicePerDay.map { Double(delivered[phase] ?? 0) / $0 }),
            "requestsPerDevicePerDay": orNull(perDevicePerDay.map { Double(c.requests) / $0 }),
            "bytesPerDevicePerDay": orNull(perDevicePerDay.map { Double(c.bytes) / $0 }),
        ]
    }
    let delivery = tally.delivery
    result["deliveryFailures"] = delivery.failures
    result["heldAtEnd"] = ["devices": tally.held.devices, "reports": tally.held.reports]
    result["firstDeliveryFailure"] = orNull(delivery.first)
    result["operationFailures"] = delivery.operations

    // The collector's fleet summary against the simulation's own counts.
    let truth = tally.truth
    var comparison: [[String: Any]] = []
    let summary = clientctlPath.isEmpty ? nil : fleetSummary(guardSetup)
    if let summary {
        let versions = summary["versions"] as? [[String: Any]] ?? []
        for version in ["1.0.0", release] {
            let entry = versions.first { $0["version"] as? String == version } ?? [:]
            func sum(_ field: String) -> Int { (entry[field] as? [String: Int] ?? [:]).values.reduce(0, +) }
            let rows: [(String, Int, Int)] = [
                ("installs", truth.installs[version]?.count ?? 0, entry["installs"] as? Int ?? 0),
                ("trials", truth.trials[version]?.count ?? 0, entry["trials"] as? Int ?? 0),
                ("commits", truth.commits[version]?.count ?? 0, entry["commits"] as? Int ?? 0),
                ("rollbacks", truth.rollbacks[version]?.count ?? 0, sum("rollbacks")),
                ("blacklists", truth.blacklists[version]?.count ?? 0, sum("blacklists")),
            ]
            for (field, simulated, collected) in rows {
                comparison.append([
                    "version": version, "field": field, "simulation": simulated, "collector": collected, "equal": simulated == collected,
                ])
            }
            if version == release {
                result["collectorRollbackReasons"] = orNull(entry["rollbacks"])
                result["collectorFailureRate"] = orNull(entry["failureRate"])
            }
        }
        let timeline = summary["timeline"] as? [[String: Any]] ?? []
        result["collectorDevices"] = orNull(summary["devices"])
        result["timelineFirst"] = orNull(timeline.first?["time"])
        result["timelineLast"] = orNull(timeline.last?["time"])
    } else {
        result["comparisonError"] = "no fleet summary from the collector (clientctl fleet status failed)"
    }
    result["comparison"] = comparison
    result["simStart"] = ISO8601DateFormatter().string(from: simStartTime)
    result["t0"] = ISO8601DateFormatter().string(from: t0)
    result["simEnd"] = ISO8601DateFormatter().string(from: t0.addingTimeInterval(Double(hours) * 3600))
    result["guard"] =
        [
            "mode": guardFailure != nil ? "failed" : guardUsed, "runs": guardRuns.count, "haltedAtSeconds": orNull(haltedAt),
            "failure": orNull(guardFailure), "lastOutput": orNull(guardRuns.last?["output"]), "maxFailureRate": maxFailureRate,
            "minDevices": minDevices, "everySeconds": guardEvery,
        ] as [String: Any]
    let exposed = truth.trials[release]?.count ?? 0
    result["exposedDevices"] = exposed
    result["exposedPercent"] = Double(exposed) / Double(devices) * 100
}
let data = (try? JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])) ?? Data()
FileHandle.standardOutput.write(data + Data("\n".utf8))

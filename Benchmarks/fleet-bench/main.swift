// fleet-bench: the Swift half of Scripts/bench/fleet (BENCHMARKS.md "Fleet").
//
//   fleet-bench WORK BASE_URL ACCESS_LOG [--devices N] [--interval S] [--hours H] [--concurrency C]
//
// WORK/releases is the release folder nginx serves at BASE_URL and logs to ACCESS_LOG
// ("$status $body_bytes_sent $uri" per line). Device roots go to WORK/devices. Simulated
// time starts at T0; every device is a library Updater whose clock is the simulation's,
// checking every S seconds ± 25 % (uniform jitter, first check at a random offset).
// Timeline: 1.0.0 everywhere before T0; at T0 1.1.0 with a 3-step rollout
// (0 h: 5 %, 24 h: 25 %, 48 h: 100 %); paused at T0+46 h, resumed at T0+54 h (the
// 100 % step falls inside the pause).
// Prints one JSON object: the fraction updated per simulated hour, the expected step, the
// share of devices whose place the step admits, and origin requests and bytes per check.
import ArchivePublishing
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import SignedArchive
import SignedManifest
import Synchronization

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("fleet-bench: \(message)\n".utf8))
    exit(64)
}

@Sendable func log(_ message: String) { FileHandle.standardError.write(Data("fleet-bench: \(message)\n".utf8)) }

var args = Array(CommandLine.arguments.dropFirst())
guard args.count >= 3 else { fail("usage: fleet-bench WORK BASE_URL ACCESS_LOG [--devices N] [--interval S] [--hours H] [--concurrency C]") }
let work = args.removeFirst()
let baseURL = args.removeFirst()
let accessLog = args.removeFirst()
var devices = 1000
var interval = 3600.0
var hours = 72
var concurrency = 8
while !args.isEmpty {
    let flag = args.removeFirst()
    guard let value = args.first.flatMap(Double.init) else { fail("\(flag) needs a number") }
    args.removeFirst()
    switch flag {
    case "--devices": devices = Int(value)
    case "--interval": interval = value
    case "--hours": hours = Int(value)
    case "--concurrency": concurrency = Int(value)
    default: fail("unknown option \(flag)")
    }
}

// Benchmarks/fleet-bench/main.swift → the package root.
let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
let keyPEM = (try? String(contentsOfFile: package + "/Keys/test-signing.pem", encoding: .utf8)) ?? ""
let publicPEM = (try? String(contentsOfFile: package + "/Keys/test-signing.pub.pem", encoding: .utf8)) ?? ""
guard let key = try? Ed25519.PrivateKey(pem: keyPEM) else { fail("cannot read Keys/test-signing.pem") }

let t0 = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 3600).rounded(.down) * 3600)
let releases = work + "/releases"
let app = "com.example.notes"

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

// The fleet: roots made as `clientctl init` makes them.
let deviceFolder = work + "/devices"
let config: DeviceConfig
do {
    config = try DeviceConfig(
        app: app, channelKind: .signedArchive,
        settings: ArchiveSettings(channel: "stable", manifestURL: baseURL + "/stable/manifest.json", trustedKeys: [publicPEM]),
        shellVersion: Version(1, 0, 0), startupTimeoutSeconds: 60)
    try await publish("1.0.0", rollout: nil, at: t0.addingTimeInterval(-7200))
    for n in 0..<devices {
        let layout = RootLayout(root: deviceFolder + "/\(n)")
        try await RootInitializer.write(config, to: layout, force: false, store: layout.clients)
    }
} catch {
    fail("setup: \(error)")
}

let downloader = Downloader(transport: DefaultTransport(), retry: RetryPolicy(maxAttempts: 3, initialDelay: 0, maxDelay: 0), idleTimeout: 30)

/// One check of device `n` at simulated time `at`: the report's result and version.
@Sendable func check(_ n: Int, at time: Date) async -> InstallReport? {
    let layout = RootLayout(root: deviceFolder + "/\(n)")
    do {
        let channel = try ArchiveChannel(layout: layout, config: config, downloader: downloader, now: { time })
        return try await Updater(layout: layout, config: config, channel: channel, now: { time }).install()
    } catch {
        log("device \(n) at T0+\(Int(time.timeIntervalSince(t0)))s: \(error)")
        return nil
    }
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

final class Tally: Sendable {
    private struct Counts {
        var updatedAt: [Int: Double] = [:]
        var checks = 0
        var failures = 0
    }
    private let counts = Mutex(Counts())
    func record(_ n: Int, _ report: InstallReport?, hour: Double) {
        counts.withLock { counts in
            counts.checks += 1
            guard let report else {
                counts.failures += 1
                return
            }
            if report.result == .installed, report.version == "1.1.0" { counts.updatedAt[n] = hour }
        }
    }
    var snapshot: (updated: Int, checks: Int, failures: Int) { counts.withLock { ($0.updatedAt.count, $0.checks, $0.failures) } }
}

// Warm-up (not counted): every device installs 1.0.0 an hour before T0.
let warmStart = Date()
await concurrently(Array(0..<devices), limit: concurrency) { n in _ = await check(n, at: t0.addingTimeInterval(-3600)) }
log("warm-up: \(devices) devices on 1.0.0 in \(String(format: "%.1f", Date().timeIntervalSince(warmStart))) s")
let warmLines = logLines().count

// The schedule of checks: each device at a random offset, then every interval ± 25 %.
var events: [(time: Double, device: Int)] = []
for n in 0..<devices {
    var t = Double.random(in: 0..<interval)
    while t < Double(hours) * 3600 {
        events.append((t, n))
        t += interval * Double.random(in: 0.75...1.25)
    }
}
events.sort { $0.time < $1.time }

let rollout = Rollout(start: t0, steps: [.init(seconds: 0, percent: 5), .init(seconds: 86_400, percent: 25), .init(seconds: 172_800, percent: 100)])
let pauseAt = 46.0 * 3600
let resumeAt = 54.0 * 3600
do { try await publish("1.1.0", rollout: rollout, at: t0) } catch { fail("publish 1.1.0: \(error)") }

// Which devices each step admits, from their ids (what the simulation must reproduce).
var places: [Int] = []
for n in 0..<devices {
    guard let id = DeviceIdentity.read(RootLayout(root: deviceFolder + "/\(n)")) else { fail("device \(n) has no id") }
    places.append(Rollout.bucket(channel: "stable", version: "1.1.0", deviceId: id))
}
/// The share of devices whose place is below `percent` × 100 (the rollout's admission rule).
func admittedShare(_ percent: Double, places: [Int]) -> Double {
    Double(places.filter { $0 < Int((percent * 100).rounded()) }.count) / Double(places.count) * 100
}

let tally = Tally()
var samples: [[String: Any]] = []
var phaseLines: [(String, Int, Int)] = []  // (phase, log line count at start, checks at start)
var edits: [(Double, String)] = [(pauseAt, "pause"), (resumeAt, "resume")]
var index = 0
let simStart = Date()
phaseLines.append(("rollout", warmLines, 0))
for hour in 1...hours {
    let end = Double(hour) * 3600
    // Edits take effect at their simulated time, between windows of checks.
    while let edit = edits.first, edit.0 < end {
        var batch: [(time: Double, device: Int)] = []
        while index < events.count, events[index].time < edit.0 {
            batch.append(events[index])
            index += 1
        }
        await concurrently(batch, limit: concurrency) { e in
            tally.record(e.device, await check(e.device, at: t0.addingTimeInterval(e.time)), hour: e.time / 3600)
        }
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
    var batch: [(time: Double, device: Int)] = []
    while index < events.count, events[index].time < end {
        batch.append(events[index])
        index += 1
    }
    await concurrently(batch, limit: concurrency) { e in
        tally.record(e.device, await check(e.device, at: t0.addingTimeInterval(e.time)), hour: e.time / 3600)
    }
    let now = t0.addingTimeInterval(end)
    let paused = end > pauseAt && end <= resumeAt
    let s = tally.snapshot
    samples.append([
        "hour": hour, "updatedPercent": Double(s.updated) / Double(devices) * 100, "stepPercent": rollout.percent(at: now),
        "paused": paused, "checks": s.checks,
    ])
    if hour % 12 == 0 {
        log("T0+\(hour) h: \(s.updated) of \(devices) updated, \(s.checks) checks (\(String(format: "%.0f", Date().timeIntervalSince(simStart))) s)")
    }
}
phaseLines.append(("end", logLines().count, tally.snapshot.checks))

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
let result: [String: Any] = [
    "devices": devices, "intervalSeconds": interval, "hours": hours, "checks": tally.snapshot.checks, "failures": tally.snapshot.failures,
    "simulationSeconds": Date().timeIntervalSince(simStart),
    "admittedPercent": ["5": admittedShare(5, places: places), "25": admittedShare(25, places: places), "100": admittedShare(100, places: places)],
    "pauseHour": pauseAt / 3600, "resumeHour": resumeAt / 3600, "samples": samples, "phases": phases,
]
let data = (try? JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])) ?? Data()
FileHandle.standardOutput.write(data + Data("\n".utf8))

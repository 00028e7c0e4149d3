// device-sim: the device's world in a deterministic simulator (Scripts/simulate,
// docs/simulation.md).
//
//   device-sim [--seeds N] [--seed S] [--first S] [--devices D] [--days K] [--work DIR] [--no-compare]
//              [--long-downloads] [--agents]
//
// Runs seeds S.. S+N-1 (or the one `--seed S`, whose every event it prints). Each seed is a
// world of D devices for K days (the last day, or half the run when shorter, without faults):
// real roots checked by the real updater against a simulated origin and site mirror on the
// simulation's clock, wall clocks that jump, checks killed at crash points (in a child
// process: `device-sim --crash-worker SPEC`), fleet reports delivered by the real report
// sender to a faulty collector (SimCollector), and the real release code's rollouts,
// restrictions, targets, pins and cohorts. Each seed runs twice, with and without the site mirror, and the mirror
// invariant compares the two. A violation is printed with its seed and the schedule that led
// to it; the exit status is 1 when there was any. Lines that hold figures of the run itself
// (times, rates) begin with `time:`; every other line is the same on every run of a seed.
// `--agents` runs the agents' world instead (SimAgents.swift): DeviceAgent.run() with its
// pages, every task on one thread (SimExecutor), time moved only when every task waits.
import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("device-sim: \(message)\n".utf8))
    exit(64)
}

var args = Array(CommandLine.arguments.dropFirst())
// The child a crash runs in (SimCrash): one check, killed at its crash point.
if args.count == 2, args[0] == "--crash-worker" { await SimCrash.worker(args[1]) }
var seeds = 8
var first: UInt64 = 1
var single: UInt64?
var deviceCount = 6
var days = 3
// In memory when the machine has /dev/shm: the roots' many small synced writes are the
// updater's, not what the simulation measures.
var work = (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()) + "device-sim-\(getpid())"
var compare = true
var longDownloads = false
var agents = false
while !args.isEmpty {
    let flag = args.removeFirst()
    func value() -> String {
        guard !args.isEmpty else { fail("\(flag) needs a value") }
        return args.removeFirst()
    }
    switch flag {
    case "--seeds": seeds = Int(value()) ?? 0
    case "--seed": single = UInt64(value())
    case "--first": first = UInt64(value()) ?? 1
    case "--devices": deviceCount = Int(value()) ?? 0
    case "--days": days = Int(value()) ?? 0
    case "--work": work = value()
    case "--no-compare": compare = false
    case "--long-downloads": longDownloads = true
    case "--agents": agents = true
    default:
        fail(
            "unknown argument \(flag) (device-sim [--seeds N] [--seed S] [--first S] [--devices D] [--days K] [--work DIR] [--no-compare] [--long-downloads] [--agents])"
        )
    }
}
guard seeds > 0, deviceCount > 0, deviceCount <= 1000, days >= 2, days <= 365 else {
    fail("--seeds and --devices (at most 1000) must be positive, --days from 2 to 365")
}

// Benchmarks/device-sim/main.swift → the package root.
let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
let keyPEM = (try? String(contentsOfFile: package + "/Keys/test-signing.pem", encoding: .utf8)) ?? ""
let publicPEM = (try? String(contentsOfFile: package + "/Keys/test-signing.pub.pem", encoding: .utf8)) ?? ""
guard let key = try? Ed25519.PrivateKey(pem: keyPEM) else { fail("cannot read \(package)/Keys/test-signing.pem") }

let list: [UInt64] = single.map { [$0] } ?? (0..<UInt64(seeds)).map { first + $0 }
let verbose = single != nil
if agents {
    await AgentsMain.run(seeds: list, devices: deviceCount, days: days, work: work, keyPEM: keyPEM, publicPEM: publicPEM, verbose: verbose)
}
var violations = 0
var totals = (
    events: 0, checks: 0, releases: 0, faults: 0, early: 0, kills: 0, diskFaults: 0, floorBelow: 0, reports: 0, again: 0,
    reportFaults: 0
)
let began = ContinuousClock.now
let cpuBefore = clock()

/// Runs one seed's world; with `mirrors` false, the same world without the site mirror.
/// For each entry of a device's history, the newest release it ran up to there (nil before any).
func newestSoFar(_ history: [String]) -> [Version?] {
    var newest: Version?
    return history.map { entry in
        if let version = Version(entry), newest.map({ $0 < version }) ?? true { newest = version }
        return newest
    }
}

@MainActor func world(_ seed: UInt64, mirrors: Bool) async throws -> SimRun.Outcome {
    let folder = work + "/\(seed)-\(mirrors ? "mirror" : "origin")"
    try? FileManager.default.removeItem(atPath: folder)
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let run = SimRun(
        SimRun.Options(
            seed: seed, devices: deviceCount, days: days, mirrors: mirrors, longDownloads: longDownloads, work: folder, key: key,
            publicPEM: publicPEM,
            say: { line in if verbose && mirrors { print(line) } }))
    return try await run.run()
}

for seed in list {
    do {
        let with = try await world(seed, mirrors: true)
        var found = with.violations
        if compare {
            let without = try await world(seed, mirrors: false)
            found += without.violations.map { "(without the mirror) " + $0 }
            // The mirror changes only speed: behind it, a device is never more than one check
            // behind the same device in the same world without it, counting the checks that may
            // download (those inside its windows) and the newest release it ran so far (a
            // rollback moves neither run back). Ahead is speed too.
            for (n, history) in with.histories.enumerated() where n % 2 == 0 && n < without.histories.count {
                let reached = newestSoFar(history)
                let other = newestSoFar(without.histories[n])
                for i in reached.indices where i < other.count {
                    let due = other[max(0, i - 1)]
                    if let due, reached[i].map({ $0 < due }) ?? true {
                        found.append(
                            "VIOLATION mirror-only-speed: device \(n), check \(i) of those inside its windows: the newest release it ran "
                                + "is \(reached[i]?.description ?? "none") with the mirror, \(due) one check earlier without it")
                        break
                    }
                }
            }
        }
        totals.events += with.events
        totals.checks += with.checks
        totals.releases += with.releases
        totals.faults += with.faults
        totals.early += with.early
        totals.kills += with.kills
        totals.diskFaults += with.diskFaults
        totals.floorBelow += with.floorBelow
        totals.reports += with.reports
        totals.again += with.reportDuplicates
        totals.reportFaults += with.reportFaults
        if found.isEmpty {
            print(
                "seed \(seed): \(deviceCount) devices, \(days) days: \(with.checks) checks, \(with.releases) releases, \(with.faults) faults, "
                    + "\(with.reports) reports: ok")
        } else {
            violations += found.count
            print("seed \(seed): \(found.count) violations (replay: Scripts/simulate --seed \(seed) --devices \(deviceCount) --days \(days))")
            for line in found { print("  " + line) }
            if !verbose {
                print("  schedule:")
                for line in with.lines { print("    " + line) }
            }
        }
    } catch {
        violations += 1
        print("seed \(seed): the world could not run: \(error)")
    }
}
let wall = (ContinuousClock.now - began).inSeconds
let cpu = Double(clock() - cpuBefore) / Double(CLOCKS_PER_SEC)
let deviceDays = Double(list.count * deviceCount * days) * (compare ? 2 : 1)
print(
    "simulate: \(list.count) seeds, \(Int(deviceDays)) device-days, \(totals.checks) checks, \(totals.releases) releases, \(totals.faults) faults, \(totals.kills) kills, \(totals.diskFaults) failed writes, \(violations) violations"
)
print(
    "simulate: \(totals.reports) reports reached the collector; \(totals.again) came again (at-least-once), "
        + "\(totals.reportFaults) batches met a collector's fault")
if totals.floorBelow > 0 {
    print("simulate: \(totals.floorBelow) times a device ran a release above its floor (the highest release it accepted)")
}
if totals.early > 0 {
    print("simulate: \(totals.early) takes under a restriction issued later than the device's clock read (it held from its issued time)")
}
print(String(format: "time: %.1f s, %.1f CPU-s, %.1f simulated device-days per CPU-second", wall, cpu, deviceDays / max(cpu, 0.001)))
try? FileManager.default.removeItem(atPath: work)
exit(violations == 0 ? 0 : 1)

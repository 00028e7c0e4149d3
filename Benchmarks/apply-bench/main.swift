// apply-bench: the Swift half of Scripts/bench/apply (BENCHMARKS.md "Apply policies").
//
//   apply-bench [--devices N] [--seed N] [--hours H] [--deadline-hours H] [--interval S]
//
// A fleet of N devices in four time zones (Europe/Berlin, America/New_York, Asia/Tokyo,
// Australia/Sydney), each with the nightly maintenance window 02:00-04:00 local, takes a
// release published at T0 with `--apply window --deadline 48h` (grace 1 h, idle 60 s after
// the deadline). Each device checks every S seconds ± 10 % (its first check at a random
// offset) and stages the release at its first check after T0. Every simulated minute each
// device's host asks the same `ApplyDecision.decide` the apply driver asks, with what the
// host would know: 10 % of devices are never idle (input every minute, day and night), 5 %
// run a page that holds a lease (600 s, renewed every 5 minutes) around the clock, 10 % are
// switched off from 22:00 to 06:00 local (they miss every window), and every device sees
// input now and then during the local day.
//
// Prints one JSON object: the share of the fleet on the new version hour by hour, and the
// checks of the goals: switches outside a window or during a lease before the
// deadline (goal 0), devices switched within deadline + grace + one check interval (goal
// 100 %; a device switched off then: within one interval of being switched on), and the
// time one decision takes.
import ApplyPolicy
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("apply-bench: \(message)\n".utf8))
    exit(64)
}

/// SplitMix64: the same fleet for the same seed.
struct SeededRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

var args = Array(CommandLine.arguments.dropFirst())
var devices = 1000
var seed: UInt64 = 1
var hours = 72
var deadlineHours = 48
var interval = 3600.0
while !args.isEmpty {
    let flag = args.removeFirst()
    guard let value = args.first else { fail("\(flag) needs a value") }
    args.removeFirst()
    switch flag {
    case "--devices": devices = Int(value) ?? devices
    case "--seed": seed = UInt64(value) ?? seed
    case "--hours": hours = Int(value) ?? hours
    case "--deadline-hours": deadlineHours = Int(value) ?? deadlineHours
    case "--interval": interval = Double(value) ?? interval
    default: fail("unknown flag \(flag)")
    }
}

let zones = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"]
// T0: 2026-11-27T10:00:00Z, a Friday morning in Berlin.
let t0 = Date(timeIntervalSince1970: 1_795_773_600)
let policy: ApplyPolicy
do {
    policy = try ApplyPolicy.make(mode: "window", idleSeconds: nil, deadline: "\(deadlineHours)h", grace: nil, releasedAt: t0)
} catch {
    fail("\(error)")
}
guard let deadline = policy.deadline, let graceExpiry = policy.graceExpiry else { fail("no deadline") }

struct Device {
    var zone: TimeZone
    var window: MaintenanceWindow
    var neverIdle: Bool
    var holdsLeases: Bool
    var offAtNight: Bool
    var stagedAt: Date
    var lastInput: Date?
    var leaseUntil: Date?
    var switchedAt: Date?
    var trigger: ApplyDecision.Trigger?
}

var random = SeededRandom(state: seed)
var fleet: [Device] = []
for n in 0..<devices {
    let name = zones[n % zones.count]
    guard let zone = TimeZone(identifier: name) else { fail("no zone \(name)") }
    let window: MaintenanceWindow
    do { window = try MaintenanceWindow(parsing: "02:00-04:00", timeZone: name, defaultZone: zone) } catch { fail("\(error)") }
    let neverIdle = random.unit() < 0.10
    let holdsLeases = random.unit() < 0.05
    let offAtNight = random.unit() < 0.10
    // The first check after T0: a random offset within one interval ± 10 %.
    let firstCheck = random.unit() * interval * (0.9 + 0.2 * random.unit())
    fleet.append(
        Device(
            zone: zone, window: window, neverIdle: neverIdle, holdsLeases: holdsLeases, offAtNight: offAtNight,
            stagedAt: t0.addingTimeInterval(firstCheck)))
}

func localHour(_ date: Date, _ zone: TimeZone) -> Int {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    return calendar.component(.hour, from: date)
}

let step: TimeInterval = 60
let end = t0.addingTimeInterval(TimeInterval(hours * 3600))
var outsideWindowBeforeDeadline = 0
var duringLeaseBeforeDeadline = 0
var decisions = 0
var decisionTime: TimeInterval = 0
var shareByHour: [Double] = []
var now = t0
let hostStart = t0.addingTimeInterval(-86_400)
while now <= end {
    for i in fleet.indices where fleet[i].switchedAt == nil {
        var d = fleet[i]
        guard now >= d.stagedAt else { continue }
        let hour = localHour(now, d.zone)
        if d.offAtNight, hour >= 22 || hour < 6 { continue }  // switched off: nothing runs
        if d.neverIdle || ((7..<23).contains(hour) && random.unit() < 0.2) { d.lastInput = now }
        if d.holdsLeases, Int(now.timeIntervalSince(t0)) % 300 == 0 { d.leaseUntil = now.addingTimeInterval(600) }
        let input = ApplyInput(
            policy: policy, stagedAt: d.stagedAt, hostStartedAt: hostStart, windows: [d.window], lastInput: d.lastInput,
            leaseUntil: d.leaseUntil, trialRunning: false, downloading: false, alreadySwitched: false)
        let started = Date()
        let decision = ApplyDecision.decide(input, now: now)
        decisionTime += Date().timeIntervalSince(started)
        decisions += 1
        if case .switchNow(let trigger) = decision {
            d.switchedAt = now
            d.trigger = trigger
            if now < deadline {
                if !d.window.contains(now) { outsideWindowBeforeDeadline += 1 }
                if let lease = d.leaseUntil, lease > now { duringLeaseBeforeDeadline += 1 }
            }
        }
        fleet[i] = d
    }
    if Int(now.timeIntervalSince(t0)) % 3600 == 0 {
        shareByHour.append(Double(fleet.filter { $0.switchedAt != nil }.count) / Double(devices))
    }
    now = now.addingTimeInterval(step)
}

// Within the deadline plus the grace plus one check interval; a device switched off then
// (it cannot run anything) within one check interval of being switched on again.
let bound = graceExpiry.addingTimeInterval(interval * 1.1)
func isOff(_ d: Device, at date: Date) -> Bool {
    let hour = localHour(date, d.zone)
    return d.offAtNight && (hour >= 22 || hour < 6)
}
var offAtBound = 0
let inTime = fleet.filter { d in
    guard let switched = d.switchedAt else { return false }
    if switched <= bound { return true }
    guard isOff(d, at: graceExpiry) else { return false }
    offAtBound += 1
    var on = graceExpiry
    while isOff(d, at: on) { on = on.addingTimeInterval(60) }
    return switched <= on.addingTimeInterval(interval * 1.1)
}.count
var triggers: [String: Int] = [:]
for d in fleet { triggers[d.trigger?.rawValue ?? "none", default: 0] += 1 }
var byKind: [String: Int] = [:]
for d in fleet where d.switchedAt != nil && d.trigger != .window {
    let kind = [d.neverIdle ? "never idle" : nil, d.holdsLeases ? "leases" : nil, d.offAtNight ? "off at night" : nil].compactMap { $0 }
    byKind[kind.isEmpty ? "other" : kind.joined(separator: "+"), default: 0] += 1
}
let result: [String: Any] = [
    "devices": devices, "seed": seed, "hours": hours, "deadlineHours": deadlineHours,
    "shareByHour": shareByHour.map { ($0 * 1000).rounded() / 1000 },
    "switchesOutsideWindowBeforeDeadline": outsideWindowBeforeDeadline,
    "switchesDuringLeaseBeforeDeadline": duringLeaseBeforeDeadline,
    "switchedWithinDeadlineGraceAndInterval": Double(inTime) / Double(devices), "switchedOffAtGraceExpiry": offAtBound,
    "triggers": triggers, "afterDeadlineByKind": byKind,
    "decisions": decisions, "microsecondsPerDecision": decisionTime / Double(max(decisions, 1)) * 1e6,
]
let data = (try? JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])) ?? Data("{}".utf8)
FileHandle.standardOutput.write(data + Data("\n".utf8))

// targeting-bench: the Swift half of Scripts/bench/targeting (BENCHMARKS.md "Targeting").
//
//   targeting-bench [--devices N] [--seed N]
//
// A fleet of N devices with random ids (seeded), half labelled ring=beta and the rest
// ring=stable, each with a store=1…50, follows one channel whose releases are signed
// here as `publish` signs them:
//
//   1.4.0        every device
//   1.4.1        target `store in (12, 14)` beside 1.4.0 (a targeted fix)
//   1.5.0-rc.1   target `ring = beta`, 50 % beside 1.4.1 and 1.4.0
//   1.5.0-rc.2   target `ring = beta`, 30 %, in rc.1's draw after it (places 5000…7999),
//                beside rc.1, 1.4.1 and 1.4.0: the layout `publish --alongside` makes
//
// Every device, fresh (nothing accepted yet), asks what a check asks:
// `ArchiveDecision.decideNewest` on the newest manifest, then `chooseBeside` on the
// releases it names. Prints one JSON object: the share of each cohort on each release
// against what was asked, whether raising rc.2 to 45 % only adds devices, whether rc.1 and
// rc.2 draw disjoint devices, and the time one device's choice takes.
import ClientFoundation
import ClientUpdater
import DeviceIdentity
import DeviceTargeting
import Foundation
import ReleaseSigning
import SignedArchive
import SignedManifest

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("targeting-bench: \(message)\n".utf8))
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
var deviceCount = 10_000
var seed: UInt64 = 1
while !args.isEmpty {
    let flag = args.removeFirst()
    guard let value = args.first else { fail("\(flag) needs a value") }
    args.removeFirst()
    switch flag {
    case "--devices": deviceCount = Int(value) ?? deviceCount
    case "--seed": seed = UInt64(value) ?? seed
    default: fail("unknown flag \(flag)")
    }
}

struct Device {
    var id: DeviceID
    var labels: DeviceLabels
    var beta: Bool { labels["ring"] == "beta" }
    var store: Int { Int(labels["store"] ?? "") ?? 0 }
}

func makeFleet(_ count: Int, seed: UInt64) -> [Device] {
    var random = SeededRandom(state: seed)
    var fleet: [Device] = []
    for _ in 0..<count {
        let id = DeviceID((0..<2).map { _ in String(format: "%016llx", random.next()) }.joined()) ?? .random()
        var labels = DeviceLabels()
        do {
            try labels.set("ring", random.unit() < 0.5 ? "beta" : "stable")
            try labels.set("store", String(1 + Int(random.next() % 50)))
        } catch { fail("\(error)") }
        fleet.append(Device(id: id, labels: labels))
    }
    return fleet
}
let fleet = makeFleet(deviceCount, seed: seed)

let key: Ed25519.PrivateKey
do { key = try Ed25519.PrivateKey.generate() } catch { fail("\(error)") }
let published = Date()

@MainActor func release(
    _ version: String, target: String? = nil, rollout: Rollout? = nil, beside: [Manifest] = [], offset: TimeInterval
) -> Manifest {
    guard let v = Version(version) else { fail("bad version \(version)") }
    var draft = ManifestDraft(
        app: "com.example.notes", channel: "stable", version: v, url: "v\(version).tar.gz", sha256: String(repeating: "0", count: 64),
        size: 1, minShellVersion: Version(1, 0, 0), published: published.addingTimeInterval(offset))
    do {
        draft.target = try target.map { try TargetExpression(parsing: $0) }
        draft.rollout = rollout
        draft.alongside = beside.map(AlongsideRelease.init(naming:))
        return try draft.signed(with: key)
    } catch { fail("\(error)") }
}

let base = release("1.4.0", offset: 0)
let fix = release("1.4.1", target: "store in (12, 14)", beside: [base], offset: 1)
let rc1 = release("1.5.0-rc.1", target: "ring = beta", rollout: .percent(50), beside: [fix, base], offset: 2)
@MainActor func rc2(percent: Double) -> Manifest {
    release(
        "1.5.0-rc.2", target: "ring = beta", rollout: Rollout(steps: [.init(seconds: 0, percent: percent)], draw: "1.5.0-rc.1", from: 50),
        beside: [rc1, fix, base], offset: 3)
}

/// The manifests each newest names, by version (a device reads them once and keeps them).
var offeredCache: [String: [Manifest]] = [:]

/// What a fresh device takes of `newest` and the releases it names (nil: nothing).
@MainActor func choice(_ device: Device, newest: Manifest, all: [Manifest]) -> String? {
    let policy = ArchiveDecision.Policy(
        app: "com.example.notes", channel: "stable", shellVersion: Version(1, 0, 0), now: published.addingTimeInterval(10),
        labels: device.labels)
    let state = DeviceState()
    let (decision, pin) = ArchiveDecision.decideNewest(newest, state: state, isUnpacked: false, policy: policy, deviceId: { device.id })
    if case .install(let m) = decision { return m.version.description }
    let named = ArchiveDecision.offeredBeside(newest, pin: pin, state: state)
    let key = newest.signature.description + named.map(\.digest).joined()
    let offered = offeredCache[key] ?? all.filter { m in named.contains { $0.names(m) } }
    offeredCache[key] = offered
    guard let (m, _) = ArchiveDecision.chooseBeside(offered, state: state, policy: policy, isUnpacked: { _ in false }, deviceId: { device.id })
    else { return nil }
    return m.version.description
}

// The baseline: the same fleet asking about one release for every device (no target, no
// rollout, nothing beside it), the check before targeting.
let baselineStart = ContinuousClock.now
let baselineTaken = fleet.map { choice($0, newest: base, all: [base]) }
let baseline = ContinuousClock.now - baselineStart
guard baselineTaken.allSatisfy({ $0 == "1.4.0" }) else { fail("the baseline release did not reach every device") }

let head30 = rc2(percent: 30)
let head45 = rc2(percent: 45)
let all = [head30, rc1, fix, base]
let started = ContinuousClock.now
let taken30 = fleet.map { choice($0, newest: head30, all: all) }
let elapsed = ContinuousClock.now - started
let taken45 = fleet.map { choice($0, newest: head45, all: [head45, rc1, fix, base]) }

/// How many devices `cohort` holds.
@MainActor func size(where cohort: (Device) -> Bool) -> Int { fleet.filter(cohort).count }

/// The standard deviation, in points, of the share of `n` random ids a rule that takes
/// `asked` percent draws: what sampling alone gives, with no bias at all.
func samplingPoints(asked: Double, n: Int) -> Double {
    let p = asked / 100
    return n > 0 ? (p * (1 - p) / Double(n)).squareRoot() * 100 : 0
}

/// Share of `cohort` that took `version`, in percent.
@MainActor func share(_ taken: [String?], _ version: String, where cohort: (Device) -> Bool) -> Double {
    let members = fleet.indices.filter { cohort(fleet[$0]) }
    guard !members.isEmpty else { return 0 }
    return Double(members.filter { taken[$0] == version }.count) * 100 / Double(members.count)
}

let betaCohort: (Device) -> Bool = { $0.beta }
let stableFixed: (Device) -> Bool = { !$0.beta && [12, 14].contains($0.store) }
let stableOther: (Device) -> Bool = { !$0.beta && ![12, 14].contains($0.store) }
// What was asked, per cohort: beta 30 % rc.2 (places 5000–7999), 50 % rc.1 (0–4999), the
// remaining 20 % the newest stable release for them; stable devices of stores 12 and 14 the
// fix, every other stable device 1.4.0. (Beta devices of stores 12 and 14 outside both rcs
// take the fix: the expected share of 1.4.1 among beta is 20 % × 2/50.)
let rows: [(cohort: String, release: String, asked: Double, measured: Double, devices: Int)] = [
    ("ring=beta", "1.5.0-rc.2", 30, share(taken30, "1.5.0-rc.2", where: betaCohort), size(where: betaCohort)),
    ("ring=beta", "1.5.0-rc.1", 50, share(taken30, "1.5.0-rc.1", where: betaCohort), size(where: betaCohort)),
    ("ring=beta", "1.4.1", 20 * 2 / 50, share(taken30, "1.4.1", where: betaCohort), size(where: betaCohort)),
    ("ring=beta", "1.4.0", 20 * 48 / 50, share(taken30, "1.4.0", where: betaCohort), size(where: betaCohort)),
    ("ring=stable, store 12 or 14", "1.4.1", 100, share(taken30, "1.4.1", where: stableFixed), size(where: stableFixed)),
    ("ring=stable, other stores", "1.4.0", 100, share(taken30, "1.4.0", where: stableOther), size(where: stableOther)),
    (
        "ring=stable", "1.5.0-rc.1 or rc.2", 0,
        share(taken30, "1.5.0-rc.1", where: { !$0.beta }) + share(taken30, "1.5.0-rc.2", where: { !$0.beta }), size(where: { !$0.beta })
    ),
]
let onRC2at30 = Set(fleet.indices.filter { taken30[$0] == "1.5.0-rc.2" })
let onRC2at45 = Set(fleet.indices.filter { taken45[$0] == "1.5.0-rc.2" })
// Disjoint draws: the devices each rc's rollout admits (its target and its places), whatever
// else they could take.
@MainActor func admitted(_ m: Manifest, _ d: Device) -> Bool {
    guard let rollout = m.rollout, m.target?.admits(TargetDevice(id: d.id, labels: d.labels)) != false else { return false }
    let place = Rollout.bucket(channel: "stable", draw: rollout.drawName(version: m.version.description), deviceId: d.id.text)
    return rollout.admits(bucket: place, at: published.addingTimeInterval(10))
}
let bothRCs = fleet.filter { admitted(rc1, $0) && admitted(head45, $0) }.count
func micros(_ d: Duration) -> Double { Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12 }

// A cohort of 100,000 ids (docs/targeting.md#cohorts): the first 1,000 beta devices of the
// fleet and 99,000 ids of devices elsewhere. 1.6.0 targets `ring = beta and id in cohort
// pilot` beside 1.4.0. Each device checks as the installer does: decide, and on
// `.needsCohort` "fetch" the file (its bytes counted), check it, answer, decide again.
let pilotMembers = Set(fleet.filter(\.beta).prefix(1_000).map(\.id.text))
var cohortRandom = SeededRandom(state: seed &+ 7)
var pilotIds = Array(pilotMembers)
while pilotIds.count < CohortFile.maxIds {
    pilotIds.append((0..<2).map { _ in String(format: "%016llx", cohortRandom.next()) }.joined())
}
let pilotFile: [UInt8]
do { pilotFile = try CohortFile.canonical(text: pilotIds.joined(separator: "\n"), source: "pilot") } catch { fail("\(error)") }
let pilot = CohortReference(name: "pilot", file: pilotFile)
let cohortRelease: Manifest = {
    guard let v = Version("1.6.0") else { fail("bad version") }
    var draft = ManifestDraft(
        app: "com.example.notes", channel: "stable", version: v, url: "v1.6.0.tar.gz", sha256: String(repeating: "0", count: 64), size: 1,
        minShellVersion: Version(1, 0, 0), published: published.addingTimeInterval(20))
    do {
        draft.target = try TargetExpression(parsing: "ring = beta and id in cohort pilot")
        draft.alongside = [AlongsideRelease(naming: base)]
        draft.cohorts = [pilot]
        return try draft.signed(with: key)
    } catch { fail("\(error)") }
}()

/// One check of `device` against 1.6.0 beside 1.4.0, with the answers it kept: the release
/// it takes and the cohort bytes it fetched.
@MainActor func cohortCheck(_ device: Device, answers: inout CohortAnswers) -> (String?, bytes: Int) {
    var policy = ArchiveDecision.Policy(
        app: "com.example.notes", channel: "stable", shellVersion: Version(1, 0, 0), now: published.addingTimeInterval(30),
        labels: device.labels, cohorts: answers)
    var bytes = 0
    let state = DeviceState()
    while true {
        var (decision, pin) = ArchiveDecision.decideNewest(cohortRelease, state: state, isUnpacked: false, policy: policy, deviceId: { device.id })
        if case .notTargeted = decision {
            let named = ArchiveDecision.offeredBeside(cohortRelease, pin: pin, state: state)
            let offered = [base].filter { m in named.contains { $0.names(m) } }
            decision =
                ArchiveDecision.chooseBeside(offered, state: state, policy: policy, isUnpacked: { _ in false }, deviceId: { device.id })?.1
                ?? decision
        }
        switch decision {
        case .needsCohort(let cohort):
            bytes += pilotFile.count
            guard CohortFile.problem(pilotFile, reference: cohort) == nil else { fail("the cohort file does not match") }
            policy.cohorts.byDigest[cohort.digest] = CohortFile.contains(pilotFile, id: device.id.text)
            pin = nil
        case .install(let m):
            answers = policy.cohorts
            return (m.version.description, bytes)
        default:
            answers = policy.cohorts
            return (nil, bytes)
        }
    }
}

var keptAnswers = [CohortAnswers](repeating: CohortAnswers(), count: fleet.count)
let cohortStart = ContinuousClock.now
let firstChecks = fleet.indices.map { cohortCheck(fleet[$0], answers: &keptAnswers[$0]) }
let cohortElapsed = ContinuousClock.now - cohortStart
let secondChecks = fleet.indices.map { cohortCheck(fleet[$0], answers: &keptAnswers[$0]) }
let stableIdx = fleet.indices.filter { !fleet[$0].beta }
let memberIdx = fleet.indices.filter { pilotMembers.contains(fleet[$0].id.text) }
let askerIdx = fleet.indices.filter { fleet[$0].beta && !pilotMembers.contains(fleet[$0].id.text) }
let cohortResult: [String: Any] = [
    "ids": pilot.count, "fileBytes": pilotFile.count,
    "bytesPerStableDevice": stableIdx.map { firstChecks[$0].bytes }.max() ?? 0,
    "bytesPerBetaNonMember": askerIdx.map { firstChecks[$0].bytes }.max() ?? 0,
    "bytesPerMember": memberIdx.map { firstChecks[$0].bytes }.max() ?? 0,
    "bytesAtSecondCheck": secondChecks.map(\.bytes).reduce(0, +),
    "membersOn160": memberIdx.filter { firstChecks[$0].0 == "1.6.0" }.count, "members": memberIdx.count,
    "othersOn160": fleet.indices.filter { !pilotMembers.contains(fleet[$0].id.text) && firstChecks[$0].0 == "1.6.0" }.count,
    "microsecondsPerCheck": micros(cohortElapsed) / Double(max(1, deviceCount)),
]

var usage = rusage()
getrusage(RUSAGE_SELF.rawValue, &usage)

let result: [String: Any] = [
    "devices": deviceCount, "seed": seed,
    "shares": rows.map {
        [
            "cohort": $0.cohort, "release": $0.release, "asked": $0.asked, "measured": $0.measured, "devices": $0.devices,
            "samplingPoints": samplingPoints(asked: $0.asked, n: $0.devices),
        ]
    },
    "withinOnePoint": rows.allSatisfy { abs($0.asked - $0.measured) <= 1 },
    "withinThreeSamplingDeviations": rows.allSatisfy { abs($0.asked - $0.measured) <= max(0.01, 3 * samplingPoints(asked: $0.asked, n: $0.devices)) },
    "raisingOnlyAdds": onRC2at30.isSubset(of: onRC2at45), "rc2DevicesAt30": onRC2at30.count, "rc2DevicesAt45": onRC2at45.count,
    "devicesInBothExperiments": bothRCs,
    "microsecondsPerDevice": micros(elapsed) / Double(max(1, deviceCount)),
    "baselineMicrosecondsPerDevice": micros(baseline) / Double(max(1, deviceCount)),
    "ratioToBaseline": micros(elapsed) / max(1, micros(baseline)), "maxResidentKiB": usage.ru_maxrss,
    "cohort": cohortResult,
]
do {
    let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
} catch { fail("\(error)") }

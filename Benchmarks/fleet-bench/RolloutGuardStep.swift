import Foundation

/// What a child process did: its exit status and its standard output (its standard error
/// goes to a file of the run, `guard-stderr.log`).
struct ChildResult: Sendable {
    var status: Int32
    var output: Data
}

/// Runs `path` with `arguments` and waits for it. Called between windows of checks, when no
/// device runs, so blocking here holds nothing up.
func runChild(_ path: String, _ arguments: [String], stderrFile: String) -> ChildResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    if !FileManager.default.fileExists(atPath: stderrFile) { _ = FileManager.default.createFile(atPath: stderrFile, contents: nil) }
    let errors = FileHandle(forWritingAtPath: stderrFile)
    _ = errors?.seekToEndOfFile()
    process.standardError = errors ?? FileHandle.nullDevice
    do {
        try process.run()
    } catch {
        return ChildResult(status: -1, output: Data("\(error)".utf8))
    }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try? errors?.close()
    return ChildResult(status: process.terminationStatus, output: data)
}

/// Where the guard reads and writes: the built `clientctl`, the release folder, the
/// collector and its read token, the trust root's rollout key and the thresholds.
struct GuardSetup: Sendable {
    var clientctl: String
    var app: String
    var channel: String
    var release: String
    var releases: String
    var collector: String
    var tokenFile: String
    var key: String
    var maxFailureRate: String
    var minDevices: String
    var stderrFile: String
    /// `--max-error-increase RATIO` for the guard (empty: errors are not judged).
    var maxErrorIncrease = ""
}

/// One run of the guard.
enum GuardVerdict: Sendable, Equatable {
    /// The release keeps rolling out.
    case holds
    /// The guard wrote `RELEASES/CHANNEL/restriction.json`: devices stop taking the release.
    case halted
    /// The guard could not run (`why`: one line); the run goes on without it.
    case failed(String)
}

/// The rollout guard step of the simulation: the built
/// `clientctl rollout guard CHANNEL --out RELEASES --collector URL --token-file FILE
/// --key ROLLOUT.pem --once --json --max-failure-rate P --min-devices N`, as a child
/// process. Exit 0: the release holds; exit 3: halted (it wrote the signed restriction,
/// which devices honour from their next check).
func runRolloutGuard(_ g: GuardSetup) -> (GuardVerdict, String) {
    let result = runChild(
        g.clientctl,
        [
            "rollout", "guard", g.channel, "--out", g.releases, "--collector", g.collector, "--token-file", g.tokenFile, "--key", g.key,
            "--once", "--json", "--max-failure-rate", g.maxFailureRate, "--min-devices", g.minDevices,
        ] + (g.maxErrorIncrease.isEmpty ? [] : ["--max-error-increase", g.maxErrorIncrease]), stderrFile: g.stderrFile)
    let output = String(decoding: result.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    switch result.status {
    case 0: return (.holds, output)
    case 3: return (.halted, output)
    default: return (.failed("clientctl rollout guard exited \(result.status)"), output)
    }
}

/// A stand-in for the guard while `clientctl rollout guard` has not landed, built from
/// commands that exist and the rule the guard is being written with (`RolloutGuardRule`):
/// it reads the collector's fleet summary (`clientctl fleet status --json`) and, when at
/// least `minDevices` devices started a trial of the release and the Wilson score
/// interval's lower bound (95 %) of the share that rolled it back is above
/// `maxFailureRate` (a fraction), pauses the rollout with the rollout role's key
/// (`clientctl rollout restrict CHANNEL --pause`).
func runStandInGuard(_ g: GuardSetup) -> (GuardVerdict, String) {
    guard let maxRate = Double(g.maxFailureRate), let minDevices = Int(g.minDevices) else {
        return (.failed("stand-in guard: --max-failure-rate and --min-devices must be numbers"), "")
    }
    let summary = fleetSummary(g)
    guard let summary else { return (.failed("stand-in guard: no fleet summary from the collector"), "") }
    let versions = summary["versions"] as? [[String: Any]] ?? []
    guard let entry = versions.first(where: { $0["version"] as? String == g.release }) else { return (.holds, "no reports of \(g.release)") }
    let trials = entry["trials"] as? Int ?? 0
    let rate = entry["failureRate"] as? Double ?? 0
    let lower = wilsonLowerBound(rate: rate, trials: trials)
    let said = "\(g.release): \(trials) trials, failure rate \(String(format: "%.3f", rate)), lower bound \(String(format: "%.3f", lower))"
    guard trials >= minDevices, lower > maxRate else { return (.holds, said) }
    let restrict = runChild(
        g.clientctl, ["rollout", "restrict", g.channel, "--out", g.releases, "--key", g.key, "--pause"], stderrFile: g.stderrFile)
    guard restrict.status == 0 else { return (.failed("clientctl rollout restrict exited \(restrict.status)"), said) }
    return (.halted, said + "; " + String(decoding: restrict.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
}

/// The lower bound of the Wilson score interval of `rate` over `trials` (z = 1.96: 95 %).
func wilsonLowerBound(rate p: Double, trials: Int, z: Double = 1.96) -> Double {
    guard trials > 0 else { return 0 }
    let n = Double(trials)
    let centre = p + z * z / (2 * n)
    let spread = z * (p * (1 - p) / n + z * z / (4 * n * n)).squareRoot()
    return max(0, (centre - spread) / (1 + z * z / n))
}

/// The collector's fleet summary of the app and channel, as `clientctl fleet status --json`
/// prints it (the JSON of `GET /v1/fleet`); nil when the command fails.
func fleetSummary(_ g: GuardSetup) -> [String: Any]? {
    let result = runChild(
        g.clientctl, ["fleet", "status", "--collector", g.collector, "--token-file", g.tokenFile, "--app", g.app, "--channel", g.channel, "--json"],
        stderrFile: g.stderrFile)
    guard result.status == 0 else { return nil }
    return (try? JSONSerialization.jsonObject(with: result.output)) as? [String: Any]
}

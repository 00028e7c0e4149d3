import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest

/// `device-sim --agents`: the agents' world for each seed (docs/simulation.md#the-agents-world),
/// its lines and figures, in a process of its own (its executor takes the process over).
enum AgentsMain {
    static func run(seeds: [UInt64], devices: Int, days: Int, work: String, keyPEM: String, publicPEM: String, verbose: Bool) async
        -> Never
    {
        // Dictionaries and sets iterate in the order of a hash seeded per process unless this
        // is set before the process starts: the engine's waiters would wake in another order
        // on each run. So the process starts itself again with it.
        if ProcessInfo.processInfo.environment["SWIFT_DETERMINISTIC_HASHING"] == nil {
            setenv("SWIFT_DETERMINISTIC_HASHING", "1", 1)
            let arguments = CommandLine.arguments
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
            argv.append(nil)
            execv("/proc/self/exe", &argv)
            FileHandle.standardError.write(Data("device-sim: cannot start itself again: \(String(cString: strerror(errno)))\n".utf8))
            exit(70)
        }
        do { try SimExecutor.takeOver() } catch {
            FileHandle.standardError.write(Data("device-sim: \(error)\n".utf8))
            exit(70)
        }
        let began = ContinuousClock.now
        let cpuBefore = clock()
        var violations = 0
        var totals = AgentWorld.Outcome()
        for seed in seeds {
            let folder = work + "/\(seed)-agents"
            try? FileManager.default.removeItem(atPath: folder)
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let options = AgentWorld.Options(
                seed: seed, devices: devices, days: days, work: folder, keyPEM: keyPEM, publicPEM: publicPEM,
                say: { line in if verbose { print(line) } })
            let outcome: AgentWorld.Outcome
            do {
                outcome = try await Task.detached { try await AgentWorld(options).run() }.value
            } catch {
                violations += 1
                print("seed \(seed): the world could not run: \(error)")
                continue
            }
            try? FileManager.default.removeItem(atPath: folder)
            totals.checks += outcome.checks
            totals.releases += outcome.releases
            totals.faults += outcome.faults
            totals.requests += outcome.requests
            totals.restarts += outcome.restarts
            totals.rollbacks += outcome.rollbacks
            totals.loads += outcome.loads
            totals.reports += outcome.reports
            totals.reportDuplicates += outcome.reportDuplicates
            totals.steps += outcome.steps
            totals.jobs += outcome.jobs
            let summary =
                "\(devices) agents, \(days) days: \(outcome.releases) releases, \(outcome.requests) requests, \(outcome.faults) faults, "
                + "\(outcome.loads) page loads, \(outcome.rollbacks) rollbacks, \(outcome.restarts) restarts, \(outcome.reports) reports"
            if outcome.violations.isEmpty {
                print("seed \(seed): \(summary): ok")
            } else {
                violations += outcome.violations.count
                print(
                    "seed \(seed): \(summary): \(outcome.violations.count) violations "
                        + "(replay: Scripts/simulate --agents --seed \(seed) --devices \(devices) --days \(days))")
                for line in outcome.violations { print("  " + line) }
                if !verbose {
                    print("  schedule:")
                    for line in outcome.lines { print("    " + line) }
                }
            }
        }
        let wall = (ContinuousClock.now - began).inSeconds
        let cpu = Double(clock() - cpuBefore) / Double(CLOCKS_PER_SEC)
        let deviceDays = Double(seeds.count * devices * days)
        print(
            "simulate --agents: \(seeds.count) seeds, \(Int(deviceDays)) device-days, \(totals.releases) releases, \(totals.requests) requests, "
                + "\(totals.faults) faults, \(totals.loads) page loads, \(totals.rollbacks) rollbacks, \(totals.restarts) restarts, "
                + "\(violations) violations")
        print(
            "simulate --agents: \(totals.reports) reports reached the collector; \(totals.reportDuplicates) came again (at-least-once); "
                + "\(totals.steps) still moments, \(totals.jobs) jobs on the world's thread")
        print(String(format: "time: %.1f s, %.1f CPU-s, %.1f simulated device-days per CPU-second", wall, cpu, deviceDays / max(cpu, 0.001)))
        try? FileManager.default.removeItem(atPath: work)
        exit(violations == 0 ? 0 : 1)
    }
}

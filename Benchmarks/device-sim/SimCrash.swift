import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation

/// A process killed at a crash point, and its restart.
///
/// `CrashPoint.hit` kills the process with a real `SIGKILL` the n-th time it reaches a named
/// point (`CLIENTCTL_CRASH_AT`, read once at start-up); it cannot stop one operation of a
/// process that goes on. So the check to be killed runs in a child process of its own (this
/// program again, `--crash-worker SPEC`): the same device root, the same origin and mirror
/// folders, the device's clock, wall clock and holds as they are at that moment, and the
/// same network faults (they are drawn from the seed, the device and the check). The kernel
/// stops it at the point; nothing after it runs, and nothing of its memory is left. The
/// simulation then restarts the device as the agent does (`Updater.start`: interrupted
/// deletions, a trial left by a dead process, the version to serve) and checks its rules.
///
/// The same child runs a check whose write fails (``SimDisk``): with `CLIENTCTL_FAIL_AT`
/// instead, the n-th hit of the point throws the error a full or failing disk gives there,
/// the check fails (or goes on, where the write's failure is not the check's) and the child
/// ends as the device's process would go on.
enum SimCrash {
    /// What the child needs to run the check.
    struct Spec: Codable {
        var seed: UInt64
        /// The world's folder (`origin/`, `mirror/`, `devices/N`).
        var work: String
        var device: Int
        var check: Int
        var faults: Bool
        /// The device's monotonic time, its wall-clock jumps and its holds, in nanoseconds.
        var now: Int64
        var jumps: [[Int64]]
        var holds: [[Int64]]
    }

    /// What the child meets: a kill at the `count`-th hit of a crash point, or a write that
    /// fails there.
    enum Plan {
        case kill(point: String, count: Int)
        case fail(SimDisk.Fault)

        /// The variable the child runs with, and its value.
        var variable: (name: String, value: String) {
            switch self {
            case .kill(let point, let count): return ("CLIENTCTL_CRASH_AT", "\(point):\(count)")
            case .fail(let fault): return ("CLIENTCTL_FAIL_AT", fault.variable)
            }
        }
    }

    /// How a child ended.
    struct Ended {
        /// Killed at the crash point.
        var killed: Bool
        /// The planned write failed (the child went on after it).
        var faulted = false
        /// What the check reported when it was not killed.
        var result: String?
        /// The device's monotonic time when the child ended (when it said so).
        var now: Int64?
        /// Payload bytes the network delivered while the policy barred them.
        var overflow: [String]
        /// What it was served, as far as it got.
        var ledger: SimNetwork.Ledger
    }

    /// The crash points on a check's path (`grep -rn CrashPoint.hit Sources`), except the
    /// report journal's, which a check without a collector does not reach.
    static let points = [
        "download.chunk", "unpack.entry", "unpack.done", "promote.sidecar-written", "promote.renamed", "files.objects-downloaded",
        "files.linked", "delta.base-rebuilt", "delta.patch-downloaded", "atomic.written", "atomic.before-rename", "atomic.renamed",
    ]

    /// The points a check passes many times.
    static let repeated: Set<String> = ["download.chunk", "unpack.entry", "atomic.written", "atomic.before-rename", "atomic.renamed"]

    static func nanoseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000
    }

    /// Runs `spec`'s check in a child that dies the `count`-th time it reaches `point`.
    static func run(_ spec: Spec, point: String, count: Int) throws -> Ended {
        try run(spec, plan: .kill(point: point, count: count))
    }

    /// Runs `spec`'s check in a child that meets `plan`.
    static func run(_ spec: Spec, plan: Plan) throws -> Ended {
        let file = spec.work + "/crash-\(spec.device)-\(spec.check).json"
        try JSONEncoder().encode(spec).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let process = Process()
        process.executableURL = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        process.arguments = ["--crash-worker", file]
        var environment = ProcessInfo.processInfo.environment
        // One plan: a kill or a failing write, never one inherited beside it.
        environment.removeValue(forKey: "CLIENTCTL_CRASH_AT")
        environment.removeValue(forKey: "CLIENTCTL_FAIL_AT")
        environment[plan.variable.name] = plan.variable.value
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
        return Ended(
            killed: killed, faulted: lines.contains("fault: met"), result: lines.first { $0.hasPrefix("result: ") }.map { String($0.dropFirst(8)) },
            now: lines.first { $0.hasPrefix("now: ") }.flatMap { Int64($0.dropFirst(5)) },
            overflow: lines.filter { $0.hasPrefix("overflow: ") }.map { String($0.dropFirst(10)) },
            ledger: SimNetwork.ledger(fromServed: lines))
    }

    /// The child: runs the check of `path`'s spec and says how it ended (unless the crash
    /// point kills it first), and whether the planned write failed.
    static func worker(_ path: String) async -> Never {
        do {
            let spec = try JSONDecoder().decode(Spec.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            let clock = SimClock()
            clock.advance(to: SimInstant(offset: .nanoseconds(spec.now)))
            let wall = SimWall(clock: clock, origin: SimRun.wallOrigin)
            for jump in spec.jumps where jump.count == 2 { wall.jump(at: SimInstant(offset: .nanoseconds(jump[0])), to: .nanoseconds(jump[1])) }
            let holds = SimHolds(wall: wall)
            for hold in spec.holds where hold.count == 2 {
                holds.add(from: SimInstant(offset: .nanoseconds(hold[0])), until: SimInstant(offset: .nanoseconds(hold[1])))
            }
            let layout = RootLayout(root: spec.work + "/devices/\(spec.device)")
            let config = try DeviceConfig.load(layout)
            let network = SimNetwork(
                seed: spec.seed, originRoot: spec.work + "/origin", mirrorRoot: spec.work + "/mirror",
                served: { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) })
            network.begin(
                SimNetwork.Context(
                    device: spec.device, check: spec.check, clock: clock, faults: spec.faults, wall: { wall.now },
                    barred: SimRun.barred(config: config, holds: holds, wall: wall), lastJump: { wall.lastJump(atOrBefore: clock.now) },
                    watchers: SimRun.watchers(config)))
            let updater = try SimRun.makeUpdater(layout: layout, config: config, wall: wall, holds: holds, network: network)
            let said: String
            do {
                let report = try await updater.install()
                said = "\(report.result.rawValue)" + (report.version.map { " \($0)" } ?? "")
            } catch {
                said = "failed: " + SimRun.short("\(error)")
            }
            let ledger = network.end()
            var lines = ledger.barredOverflow.map { "overflow: " + $0 }
            if FaultPoint.planFailed { lines.append("fault: met") }
            lines += ["result: " + said, "now: \(nanoseconds(clock.now.offset))"]
            FileHandle.standardOutput.write(Data(lines.map { $0 + "\n" }.joined().utf8))
            exit(0)
        } catch {
            FileHandle.standardOutput.write(Data("result: the worker could not run: \(error)\n".utf8))
            exit(0)
        }
    }
}

import ClientUpdater
import Foundation
import SignedArchive
import TestSupport
import Testing

/// 20 `clientctl install` processes started together on one root: the root's lock lets
/// exactly one of them install; the others wait and find the root up to date, or give up
/// with exit 75 when `--wait` is short. The root is valid afterwards.
@Suite struct ConcurrentInstallTests {
    static let processes = 20

    @Test func twentyInstallsWaitingForTheLockInstallOnce() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        // Slow the archive a little so the others really queue on the lock.
        f.faults.add(.drip(bytes: 256, every: 0.01), path: "/stable/v1.0.0.tar.gz")
        let results = try await Self.runTogether(Self.processes, root: f.layout.root, extra: ["--wait", "60"])
        for (n, r) in results.enumerated() {
            #expect(r.status == 0, "process \(n) exited \(r.status): \(r.errorOutput)")
        }
        let outcomes = results.compactMap(Self.result)
        #expect(outcomes.count == Self.processes, "not every process printed a JSON report")
        #expect(outcomes.filter { $0 == "installed" }.count == 1, "outcomes: \(outcomes)")
        #expect(outcomes.filter { $0 == "up-to-date" }.count == Self.processes - 1, "outcomes: \(outcomes)")
        #expect(f.requests(to: "/stable/v1.0.0.tar.gz").count == 1, "the archive was downloaded more than once")
        try await Self.expectValidRoot(f, version: "1.0.0")
    }

    @Test func twentyInstallsWithAShortWaitExit75ButOne() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        // The winner holds the lock for ~3 s (the archive drips), far past --wait 0.3.
        let archiveSize = try #require(
            FileManager.default.attributesOfItem(atPath: f.releases.channelDirectory + "/v1.0.0.tar.gz")[.size] as? NSNumber)
        let chunk = max(1, archiveSize.intValue / 30)
        f.faults.add(.drip(bytes: chunk, every: 0.1), path: "/stable/v1.0.0.tar.gz")
        let results = try await Self.runTogether(Self.processes, root: f.layout.root, extra: ["--wait", "0.3"])
        let installed = results.filter { $0.status == 0 && Self.result($0) == "installed" }
        let locked = results.filter { $0.status == 75 }
        #expect(installed.count == 1, "statuses: \(results.map(\.status))")
        #expect(locked.count >= Self.processes / 2, "statuses: \(results.map(\.status))")
        for r in results where r.status != 75 {
            #expect(r.status == 0, "unexpected exit \(r.status): \(r.errorOutput)")
            #expect(["installed", "up-to-date"].contains(Self.result(r) ?? ""), "\(r.output)")
        }
        for r in locked {
            let message = r.errorOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(message.contains("is locked by another clientctl process"), "\(message)")
            #expect(!message.contains("\n"), "one line expected: \(message)")
            #expect(r.stdout.isEmpty)
        }
        #expect(f.requests(to: "/stable/v1.0.0.tar.gz").count == 1)
        try await Self.expectValidRoot(f, version: "1.0.0")
    }

    /// Starts `count` `clientctl install --json` processes back to back, then waits for all,
    /// on a thread of its own: the waits last seconds and must not block the pool that the
    /// tests beside this one run on.
    static func runTogether(_ count: Int, root: String, extra: [String]) async throws -> [Finished] {
        try await offload { try runTogetherBlocking(count, root: root, extra: extra) }
    }

    private static func runTogetherBlocking(_ count: Int, root: String, extra: [String]) throws -> [Finished] {
        let scratch = try TemporaryDirectory("concurrent")
        var running: [(Process, String)] = []
        for n in 0..<count {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ClientctlBinary.path)
            process.arguments = ["install", "--root", root, "--json"] + extra
            let out = scratch("\(n).out")
            let err = scratch("\(n).err")
            _ = FileManager.default.createFile(atPath: out, contents: nil)
            _ = FileManager.default.createFile(atPath: err, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
            process.standardInput = FileHandle.nullDevice
            running.append((process, scratch("\(n)")))
        }
        for (process, _) in running { try process.runUnmasked() }
        return running.map { process, base in
            process.waitUntilExit()
            let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
            return Finished(
                status: status,
                stdout: FileManager.default.contents(atPath: base + ".out") ?? Data(),
                stderr: FileManager.default.contents(atPath: base + ".err") ?? Data())
        }
    }

    /// What one finished process did.
    struct Finished {
        var status: Int32
        var stdout: Data
        var stderr: Data
        var output: String { String(decoding: stdout, as: UTF8.self) }
        var errorOutput: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// The `result` field of an `install --json` report.
    static func result(_ r: Finished) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any] else { return nil }
        return object["result"] as? String
    }

    /// status works and agrees; exactly one version folder and its sidecar; no leftovers.
    static func expectValidRoot(_ f: DeviceFixture, version: String) async throws {
        let status = try await ClientctlBinary.run(["status", "--root", f.layout.root, "--json"])
        #expect(status.status == 0, "\(status.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])
        #expect(object["pending"] as? String == version)
        #expect(object["selected"] as? String == version)
        let installed = ((object["installed"] as? [[String: Any]]) ?? []).compactMap { $0["version"] as? String }
        #expect(installed == [version])
        let names = try FileManager.default.contentsOfDirectory(atPath: f.layout.clients).sorted()
        #expect(names == ["v\(version)", "v\(version).json"], "clients/ holds \(names)")
        let rootNames = try FileManager.default.contentsOfDirectory(atPath: f.layout.root).filter { $0.contains(".tmp-") || $0.hasPrefix(".staging") }
        #expect(rootNames.isEmpty, "\(rootNames)")
        let index = try String(contentsOfFile: f.layout.clients + "/v\(version)/index.html", encoding: .utf8)
        #expect(index.contains(">\(version)<"))
    }
}

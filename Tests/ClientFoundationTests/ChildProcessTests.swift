import Foundation
import TestSupport
import Testing

@testable import ClientFoundation

/// The one child-process runner (``ChildProcess``): output, exit status and signal, a
/// deadline that kills the child with the processes it started, and a parent holding
/// thousands of descriptors (where Foundation's `Process.run()` overran readdir's buffer).
@Suite struct ChildProcessTests {
    @Test func capturesOutputAndExitStatus() async throws {
        let result = try await ChildProcess(
            "/bin/sh", ["-c", "cat; echo out; echo err >&2; exit 3"], input: .data(Data("in\n".utf8)), timeout: .seconds(60)
        ).run()
        #expect(result.termination == .exited(3))
        #expect(String(decoding: result.standardOutput, as: UTF8.self) == "in\nout\n")
        #expect(String(decoding: result.standardError, as: UTF8.self) == "err\n")
        #expect(!result.timedOut)
    }

    @Test func manyChildrenAtOnceEachGetTheirOwnOutput() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<40 {
                group.addTask {
                    let result = try await ChildProcess("/bin/sh", ["-c", "echo child \(index)"], input: .data(Data("x".utf8))).run()
                    return String(decoding: result.standardOutput, as: UTF8.self) == "child \(index)\n"
                }
            }
            for try await right in group { #expect(right) }
        }
    }

    /// A second `waitBlocking()` of a reaped child (a test's `stop()`, then its `deinit`)
    /// returns its result at once. It once handed the wait to a new task and blocked on it:
    /// with every thread of Swift's cooperative pool blocked so, nothing ran that task and
    /// the whole test run hung (CI, with two Roughtime servers released together).
    @Test func waitBlockingOnAReapedChildNeedsNothingFromThePool() async throws {
        let running = try ChildProcess("/bin/sh", ["-c", "exit 4"]).start()
        #expect(running.waitBlocking().termination == .exited(4))
        // Twice as many blocked callers as the pool has threads, all on the pool.
        let callers = 2 * ProcessInfo.processInfo.activeProcessorCount
        let results = await withTaskGroup(of: ChildProcess.Termination.self) { group in
            for _ in 0..<callers { group.addTask { running.waitBlocking().termination } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results == Array(repeating: .exited(4), count: callers))
    }

    @Test func reportsTheSignalThatEndedIt() async throws {
        let result = try await ChildProcess("/bin/sh", ["-c", "kill -TERM $$"]).run()
        #expect(result.termination == .signaled(SIGTERM))
        #expect(result.termination.shellStatus == 128 + SIGTERM)
    }

    @Test func capsWhatItReadsBack() async throws {
        let result = try await ChildProcess(
            "/bin/sh", ["-c", "head -c 10000 /dev/zero"], standardOutput: .memory(cap: 100), timeout: .seconds(60)
        ).run()
        #expect(result.standardOutput.count == 100)
        #expect(result.outputOverflowed)
        #expect(!result.errorOverflowed)
    }

    @Test func runsInItsDirectoryWithItsEnvironment() throws {
        let result = try ChildProcess("sh", ["-c", "pwd; echo $CHILD_PROCESS_TEST"], environment: ["CHILD_PROCESS_TEST": "yes"], directory: "/usr")
            .runBlocking()
        #expect(String(decoding: result.standardOutput, as: UTF8.self) == "/usr\nyes\n")
    }

    @Test func aMissingExecutableThrows() {
        #expect(throws: ChildProcess.SpawnError.self) { try ChildProcess("no-such-tool-here").runBlocking() }
    }

    @Test func killsTheChildAndItsGrandchildPastTheDeadline() async throws {
        let marker = NSTemporaryDirectory() + "/child-process-\(UUID().uuidString)"
        defer { unlink(marker) }
        // The grandchild would write the marker after 6 s; the deadline is 1 s. No bound on
        // the time this task takes to resume: beside the whole suite the cooperative pool
        // can be busy for seconds (the kill itself is a Dispatch timer's). The grandchild
        // names itself (`$!`): the test awaits its end rather than sleeping past the 6 s.
        let result = try await ChildProcess(
            "/bin/sh", ["-c", "(sleep 6; touch \(marker)) & echo started $!; wait"], timeout: .seconds(1)
        ).run()
        #expect(result.timedOut)
        #expect(result.termination == .signaled(SIGKILL))
        let output = String(decoding: result.standardOutput, as: UTF8.self)
        let grandchild = try #require(
            output.hasPrefix("started ") ? Int32(output.dropFirst("started ".count).trimmingCharacters(in: .whitespacesAndNewlines)) : nil,
            "\(output)")
        // Killed, it is gone at once; spared, it would end after touching the marker.
        try await Poll.until("the grandchild \(grandchild) to end", timeout: 60) { !ProcessTree.isLive(grandchild) }
        #expect(!FileManager.default.fileExists(atPath: marker), "the grandchild was killed with the child")
    }

    @Test func aStartedChildIsAHandle() async throws {
        let running = try ChildProcess("/bin/sh", ["-c", "sleep 30"]).start()
        #expect(!running.hasEnded)
        running.signal(SIGTERM)
        let result = await running.wait()
        #expect(result.termination == .signaled(SIGTERM))
        #expect(running.hasEnded)
    }

    @Test func runsWhileThisProcessHoldsTwoThousandDescriptors() async throws {
        // Raised for good, not restored: a test beside this one may hold a descriptor above
        // the old limit by then, and the child's dup2 of it would fail.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4_096 {
            limit.rlim_cur = min(4_096, limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<2_000 {
            let fd = open("/dev/null", O_RDONLY)  // without O_CLOEXEC: the child must close it
            try #require(fd >= 0)
            held.append(fd)
        }
        let result = try await ChildProcess("/bin/sh", ["-c", "ls /proc/self/fd | wc -l"], timeout: .seconds(60)).run()
        #expect(result.termination == .exited(0))
        let count = Int(String(decoding: result.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        #expect((count ?? 1_000) <= 5, "the child inherited none of the 2,000 descriptors")
    }
}

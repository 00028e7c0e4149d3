import ClientFoundation
import Foundation
import TestSupport

/// `clientctl-shell` under `xvfb-run` as ``ShellHarness/run(root:exitAfter:arguments:environment:)``
/// starts it, but left running: the test reads its `--events` lines as they come (stdout
/// goes to a file), finds its processes in `/proc` (the WebKit web process is a child of
/// the shell) and acts on them, then waits for the end.
///
/// The run is a ``ChildProcess`` (posix_spawn, no signal blocked, a process group of its
/// own), not Foundation's `Process`: that one learns of the end when every holder of a
/// socket it hands the child has closed it, and `xvfb-run` passes the socket on to Xvfb,
/// which outlives `xvfb-run` as an orphan. A shell test in CI then waited on
/// `waitUntilExit()` for an Xvfb that no longer had a parent to kill it, and held the
/// whole run until CI's limit. Here the end is `waitid(WNOWAIT)` on `xvfb-run` itself, and
/// a test that ends early kills the group and the tree without waiting.
final class RunningShell: Sendable {
    let child: ChildProcess.Running
    let stdoutPath: String
    let stderrPath: String

    init(root: String, exitAfter: Double, arguments: [String] = [], environment: [String: String] = [:], scratch: String) throws {
        let name = scratch + "/shell-\(UUID().uuidString)"
        stdoutPath = name + ".stdout"
        stderrPath = name + ".stderr"
        let variables = environment.isEmpty ? [] : ["/usr/bin/env"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let command =
            ["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24"] + variables
            + [ClientctlBinary.shellPath, "--root", root, "--events", "--exit-after", String(exitAfter)] + arguments
        child = try ChildProcess("/usr/bin/env", command, standardOutput: .file(stdoutPath), standardError: .file(stderrPath)).start()
    }

    /// A test that failed before ``finish(timeout:)`` leaves no window, Xvfb or web process
    /// behind: the whole tree is killed here (a shell stuck in a flood may not answer
    /// SIGTERM), and the handle, released next, kills the group (Xvfb may have outlived
    /// `xvfb-run`) unless ``finish(timeout:)`` reaped it, and reaps on a thread of its own.
    /// Nothing here waits, and nothing signals a group whose leader was reaped: its pid
    /// may already lead another test's child.
    deinit {
        if !child.hasEnded { ProcessTree.kill(child.pid) }
    }

    /// The complete event lines printed so far.
    var events: [ShellHarness.Event] {
        let text = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let decoder = JSONDecoder()
        return text.split(separator: "\n").compactMap { try? decoder.decode(ShellHarness.Event.self, from: Data($0.utf8)) }
    }

    /// Waits until the events printed so far satisfy `condition`; returns them.
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 30, _ condition: @escaping ([ShellHarness.Event]) -> Bool) async throws -> [ShellHarness.Event] {
        do {
            try await Poll.until(what, timeout: timeout, every: .milliseconds(50)) { condition(self.events) }
        } catch {
            throw HarnessError("\(error); events: \(events.map(\.description)); stderr: \(stderrText)")
        }
        return events
    }

    /// The shell's pid: the child of `xvfb-run` that runs the shell (`env` execs it).
    var shellPID: Int32? {
        ProcessTree.children(of: child.pid).first { $0.name == "clientctl-shell" }?.pid
    }

    /// The shell's WebKit web processes (WebKit runs them as its children).
    var webProcesses: [Int32] {
        guard let shell = shellPID else { return [] }
        return ProcessTree.children(of: shell).filter { $0.name == "WebKitWebProces" }.map(\.pid)  // comm holds 15 characters
    }

    /// `VmHWM` of the shell (its peak resident memory), in KiB.
    var shellPeakKiB: Int? {
        guard let shell = shellPID, let status = try? String(contentsOfFile: "/proc/\(shell)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return Int(line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
    }

    /// Waits for the run to end and returns it as ``ShellHarness/run(root:exitAfter:arguments:environment:)`` does.
    ///
    /// The end is that of every process of the run, as `systemctl stop` waits for a whole
    /// unit: `xvfb-run`, then what stays of its group (Xvfb, and WebKit's processes, which
    /// may still be writing a cache as the shell exits).
    func finish(timeout: Double = 60) async throws -> ShellHarness.Run {
        do {
            try await Poll.until("the shell to exit", timeout: timeout, every: .milliseconds(50)) { child.hasEnded }
            try await Poll.until("the run's other processes to exit", timeout: timeout, every: .milliseconds(50)) {
                ProcessTree.members(ofGroup: child.pid).isEmpty
            }
        } catch {
            let left = ProcessTree.members(ofGroup: child.pid).map { "\($0.name) (\($0.pid))" }
            throw HarnessError("\(error); still running: \(left); events: \(events.map(\.description)); stderr: \(stderrText)")
        }
        let ended = await child.wait()
        return ShellHarness.Run(status: ended.termination.shellStatus, events: events, stderr: stderrText)
    }

    /// Ends the run as `systemctl stop` does (SIGTERM to the shell) once the events satisfy
    /// `condition`, and returns it: a test gives the shell a long `--exit-after` and stops it
    /// when what it checks has happened, however slow the machine.
    func stop(
        when what: String, timeout: Double = 60, _ condition: @escaping ([ShellHarness.Event]) -> Bool
    ) async throws -> ShellHarness.Run {
        try await waitFor(what, timeout: timeout, condition)
        return try await terminate()
    }

    /// Sends `signal` to the shell (SIGTERM, as `systemctl stop` does) and waits for the end
    /// of the run.
    func terminate(signal: Int32 = SIGTERM) async throws -> ShellHarness.Run {
        if let shell = shellPID { kill(shell, signal) }
        return try await finish()
    }

    /// What the shell printed on stderr so far.
    var stderrText: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}

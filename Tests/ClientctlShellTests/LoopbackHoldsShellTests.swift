import Foundation
import TestSupport
import Testing

/// `--origin loopback` holds (issue 34, items 2 and 4; docs/native-shell.md#how-the-loopback-origin-works):
/// WebKit's network process killed, a local flood of idle connections, a main-frame load
/// that fails. Real windows under Xvfb, in `NativeShellTests` so that one window runs at a
/// time.
extension NativeShellTests {
    /// Paints blue at its first load and green at every later one (localStorage counts),
    /// then acknowledges.
    static let countingLoads = """
        var loads = Number(localStorage.getItem('loads') || '0') + 1;
        localStorage.setItem('loads', String(loads));
        var colour = loads === 1 ? '\(blue)' : '\(green)';
        document.documentElement.style.background = colour; document.body.style.background = colour;
        WebAppLocalServer.startupDidComplete();
        """

    /// The shell's WebKit network process (`WebKitNetworkProcess`, `comm` of 15 characters).
    static func networkProcesses(of shell: RunningShell) -> [Int32] {
        guard let pid = shell.shellPID else { return [] }
        return ProcessTree.children(of: pid).filter { $0.name == "WebKitNetworkPr" }.map(\.pid)
    }

    /// The session cookie lived only in the network process: after a SIGKILL of it the shell
    /// reports `networkProcessTerminated`, loads a fresh launch URL, and the page paints and
    /// acknowledges again (a snapshot after the death, of the second load's colour).
    @Test func aLoopbackPageOutlivesItsNetworkProcess() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-loopback-network")
        try await rig.publish("1.0.0", script: Self.countingLoads)
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(
            root: rig.root, exitAfter: 120, arguments: ["--origin", "loopback", "--port", "0", "--snapshot", shot], scratch: rig.tmp.path)
        try await shell.waitFor("the commit's snapshot") { events in
            events.contains { $0.kind == "committed" && $0.version == "1.0.0" } && events.contains { $0.event == "snapshot" }
        }
        try await Self.expectColour(shot, Self.blue)
        let network = Self.networkProcesses(of: shell)
        #expect(network.count == 1, "one network process: \(network)")
        let pid = try #require(network.first, "the shell has a WebKitNetworkProcess child")
        #expect(kill(pid, SIGKILL) == 0)
        let run = try await shell.stop(when: "the network process's end and a snapshot after it") { events in
            guard let end = events.firstIndex(where: { $0.event == "networkProcessTerminated" }) else { return false }
            return events[end...].contains { $0.event == "snapshot" }
        }
        let end = try #require(run.events.first { $0.event == "networkProcessTerminated" }, "\(run.summary)")
        #expect(end.pid == Int(pid) && end.reloaded == true && end.version == "1.0.0", "\(run.summary)")
        let reloaded = try #require(run.lastSnapshot, "\(run.summary)")
        #expect(reloaded.ms > end.ms && reloaded.version == "1.0.0", "\(run.summary)")
        #expect(!run.events.contains { $0.event == "loadFailed" }, "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
        #expect(Self.networkProcesses(of: shell).isEmpty, "the shell has ended")
    }

    /// TCP connections established to or from `port` on this machine (`ss`), the listener's
    /// accepted ones and their clients' ends alike.
    static func establishedConnections(port: Int) async throws -> Int {
        let listed = try await Subprocess.run(
            "ss", ["-H", "-t", "-n", "state", "established", "(", "sport", "=", ":\(port)", "or", "dport", "=", ":\(port)", ")"], gate: nil)
        guard listed.status == 0 else { throw HarnessError("ss failed: \(listed.errorOutput)") }
        return listed.output.split(separator: "\n").count
    }

    /// Holds `count` idle TCP connections to 127.0.0.1:`port` from a child process (python3:
    /// this test process must stay far below ~1,300 descriptors, see
    /// ServeConnectionLimitTests.floodableServeLimit), and prints every second how many of
    /// them the server has closed (`closed N`).
    static let floodScript = """
        import select, socket, sys, time
        port, count = int(sys.argv[1]), int(sys.argv[2])
        socks = []
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(('127.0.0.1', port))
            except BlockingIOError:
                pass
            socks.append(s)
        print('flooding', flush=True)
        closed = set()
        while True:
            time.sleep(1)
            for i, s in enumerate(socks):
                if i in closed:
                    continue
                try:
                    if s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b'':
                        closed.add(i)
                except BlockingIOError:
                    pass
                except OSError:
                    closed.add(i)
            print('closed %d' % len(closed), flush=True)
        """

    /// The flood's child process, its output in a file.
    final class Flood: @unchecked Sendable {
        // @unchecked: used from one test task at a time.
        let process = Process()
        let output: String

        init(port: Int, count: Int, scratch: String) throws {
            let script = scratch + "/flood.py"
            output = scratch + "/flood.out"
            try Data(NativeShellTests.floodScript.utf8).write(to: URL(fileURLWithPath: script))
            _ = FileManager.default.createFile(atPath: output, contents: nil)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script, String(port), String(count)]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.runUnmasked()
        }

        deinit { stop() }

        /// The latest count of connections the server closed, nil before the flood is set up.
        var closed: Int? {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            guard text.contains("flooding") else { return nil }
            return text.split(separator: "\n").last { $0.hasPrefix("closed ") }.flatMap { Int($0.dropFirst("closed ".count)) } ?? 0
        }

        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// 1,500 idle connections from another local process (three times the listener's cap of
    /// 512) while the page switches to 1.1.0: the new page's connections, which carry the
    /// run's cookie, are not queued behind the flood, so 1.1.0 loads, paints and commits
    /// within its 10 s trial; the flood's connections are closed. (Before, they held the
    /// listener until its 10 s header timeout and the trial failed or just made it.)
    @Test func aLocalFloodDoesNotHoldBackTheLoopbackView() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-loopback-flood")
        // 1.0.0 asks for updates every second through the bridge (no HTTP request) and
        // switches to what it finds.
        let checking = """
            WebAppLocalServer.startupDidComplete();
            WebAppLocalServer.onNewVersionReady(function () { WebAppLocalServer.switchToPendingVersion(); });
            setInterval(function () { WebAppLocalServer.checkForUpdates(); }, 1000);
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: checking))
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(
            root: rig.root, exitAfter: 240, arguments: ["--origin", "loopback", "--port", "0", "--snapshot", shot, "--check-interval", "0"],
            scratch: rig.tmp.path)
        let started = try await shell.waitFor("1.0.0 committed") { events in
            events.contains { $0.event == "listening" } && events.contains { $0.kind == "committed" && $0.version == "1.0.0" }
        }
        let uri = try #require(started.first { $0.event == "listening" }?.uri)
        let port = try #require(Int(uri.dropFirst("http://127.0.0.1:".count).dropLast()), "\(uri)")
        // The view's keep-alive connections close after the listener's 30 s idle timeout:
        // 1.1.0's page then needs new ones, which meet the flood. Awaited as such (none left
        // established on the port), not as 32 s that a busy machine may not honour.
        try await Poll.until("the view's connections to the loopback origin to be closed", timeout: 90, every: .milliseconds(500)) {
            try await Self.establishedConnections(port: port) == 0
        }
        let flood = try Flood(port: port, count: 1_500, scratch: rig.tmp.path)
        defer { flood.stop() }
        try await Poll.until("the flood to be in place", timeout: 60) { flood.closed != nil }
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.blue, then: ReleaseRig.acknowledging))
        let run = try await shell.stop(when: "1.1.0 committed or failed", timeout: 120) { events in
            events.contains { $0.event == "watchdog" && $0.version == "1.1.0" && ["committed", "failed"].contains($0.kind ?? "") }
                && events.contains { $0.event == "snapshot" && $0.version == "1.1.0" }
        }
        #expect(run.watchdog("committed", "1.1.0") != nil, "1.1.0 loaded within its trial under the flood: \(run.summary)")
        #expect(run.watchdog("failed", "1.1.0") == nil, "\(run.summary)")
        #expect(!run.events.contains { $0.event == "loadFailed" }, "\(run.summary)")
        try await Self.expectColour(shot, Self.blue)
        // At least a listener's cap of them (512) closed by the server; the rest wait for
        // the kernel's SYN retries (the backlog holds 257) to be accepted, then closed.
        try await Poll.until("the flood's connections to be closed", timeout: 60) { (flood.closed ?? 0) >= 512 }
    }

    /// The view's connections are cut (`ss -K`, as a reset would) while its first load waits
    /// for the engine (the test holds the agent lock): WebKit's error page is not shown and
    /// nothing from it counts, a `loadFailed` event names the URI, and the page is loaded
    /// again and paints: the only `firstPaint` comes after the failure.
    @Test func aFailedMainFrameLoadIsReportedAndReloaded() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-load-failed")
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: ReleaseRig.acknowledging))
        try await rig.run(["install", "--root", rig.root])
        let probe = try await Subprocess.run("ss", ["-K", "-t", "state", "established", "dport", "=", ":1"], gate: nil)
        try #require(probe.status == 0, "ss -K is needed to cut a connection: \(probe.errorOutput)")
        // The engine's start waits for the agent lock: the page's request waits with it.
        let lockPath = rig.root + "/agent.lock"
        _ = FileManager.default.createFile(atPath: lockPath, contents: nil)
        let held = open(lockPath, O_RDWR)
        try #require(held >= 0)
        defer { close(held) }
        #expect(flock(held, LOCK_EX) == 0)
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(
            root: rig.root, exitAfter: 120, arguments: ["--origin", "loopback", "--port", "0", "--snapshot", shot], scratch: rig.tmp.path)
        let listening = try await shell.waitFor("the loopback origin") { $0.contains { $0.event == "listening" } }
        let uri = try #require(listening.first { $0.event == "listening" }?.uri)
        let port = String(uri.dropFirst("http://127.0.0.1:".count).dropLast())
        for _ in 0..<8 {  // every connection to the port, for 2.4 s, whatever libsoup retries
            try await WorldTime.pass(.milliseconds(300), "a network that cuts every connection, over and over")
            _ = try await Subprocess.run(
                "ss", ["-K", "-t", "state", "established", "(", "sport", "=", ":\(port)", "or", "dport", "=", ":\(port)", ")"], gate: nil)
        }
        flock(held, LOCK_UN)
        // The first paint is awaited too, not implied by the snapshot: the page acknowledges
        // from its script, the snapshot follows 0.2 s after the engine accepts that, while
        // `firstPaint` is posted two animation frames after the document's end and queued
        // behind the acknowledgement; with the cores busy it can come after the snapshot.
        let run = try await shell.stop(when: "a failure, then a commit, its snapshot and a first paint") { events in
            guard let failed = events.firstIndex(where: { $0.event == "loadFailed" }) else { return false }
            return events[failed...].contains { $0.event == "snapshot" } && events.contains { $0.kind == "committed" }
                && events.contains { $0.event == "firstPaint" }
        }
        let failed = try #require(run.events.first { $0.event == "loadFailed" }, "\(run.summary)")
        #expect(failed.uri?.hasPrefix(uri) == true && failed.message?.isEmpty == false && failed.failures == 1, "\(run.summary)")
        let paints = run.events.filter { $0.event == "firstPaint" }
        #expect(paints.count == 1 && paints[0].ms > failed.ms, "the error page's paint is not counted: \(run.summary)")
        #expect(run.watchdog("committed", "1.0.0") != nil, "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
    }
}

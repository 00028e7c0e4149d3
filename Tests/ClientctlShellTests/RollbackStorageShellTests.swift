import Foundation
import TestSupport
import Testing

/// A rollback that lands on a page which cannot start (issue 34, item 6;
/// docs/native-shell.md#a-page-that-does-not-start): a trial upgraded the app's IndexedDB
/// schema and never acknowledged, and the good version it fell back to cannot open its
/// database (`VersionError`). The shell reports it and follows its rule (a reload, then the
/// app's storage cleared) until the good version is on screen again. A real page in a real
/// window under Xvfb.
extension NativeShellTests {
    /// 1.0.0 opens IndexedDB version 1 and acknowledges (green) only once it opened;
    /// 1.1.0 upgrades it to version 2 and never acknowledges. After 1.1.0's trial times
    /// out, 1.0.0's page gets `VersionError`, throws (the cause the steps report) and stays
    /// white: reloaded once (step 1, still white), then its storage is cleared (step 2) and
    /// it opens a new database, paints green and acknowledges (`pageStarted` after 2
    /// steps). Without the rule the window stayed white and nothing said so.
    @Test func aRollbackOntoAPageThatCannotOpenItsStorageClearsItAndShowsTheGoodVersion() async throws {
        let rig = try await ReleaseRig(startupTimeout: 4, label: "shell-rollback-storage")
        let opening = """
            var request = indexedDB.open('kept', 1);
            request.onupgradeneeded = function () { request.result.createObjectStore('notes'); };
            request.onsuccess = function () {
              document.documentElement.style.background = '\(Self.green)'; document.body.style.background = '\(Self.green)';
              WebAppLocalServer.startupDidComplete();
            };
            request.onerror = function () { throw new Error('cannot open storage: ' + request.error.name); };
            """
        try await rig.publish("1.0.0", script: opening)
        try await rig.run(["install", "--root", rig.root])
        let first = try RunningShell(root: rig.root, exitAfter: 60, scratch: rig.tmp.path)
        let committed = try await first.stop(when: "1.0.0 committed") { $0.contains { $0.kind == "committed" && $0.version == "1.0.0" } }
        #expect(committed.status == 0, "\(committed.summary)")
        let upgrading = """
            var request = indexedDB.open('kept', 2);
            request.onupgradeneeded = function () { request.result.createObjectStore('notes-v2'); };
            request.onsuccess = function () {
              document.documentElement.style.background = '\(Self.red)'; document.body.style.background = '\(Self.red)';
            };
            """
        try await rig.publish("1.1.0", script: upgrading)  // never acknowledges
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(
            root: rig.root, exitAfter: 120, arguments: ["--snapshot", shot, "--check-interval", "0"], scratch: rig.tmp.path)
        let run = try await shell.stop(when: "1.0.0 started again and its snapshot", timeout: 90) { events in
            guard let started = events.firstIndex(where: { $0.event == "pageStarted" }) else { return false }
            return events[started...].contains { $0.event == "snapshot" }
        }
        #expect(run.status == 0, "\(run.summary)")
        let failed = try #require(run.watchdog("failed", "1.1.0"), "\(run.summary)")
        #expect(failed.reason == "timed-out" && failed.revertedTo == "1.0.0", "\(run.summary)")
        let steps = run.events.filter { $0.event == "pageNotStarting" }
        #expect(steps.map(\.step) == [1, 2] && steps.map(\.remedy) == ["reload", "clear-storage"], "\(run.summary)")
        #expect(
            steps.allSatisfy { $0.version == "1.0.0" && $0.after == "rollback" && $0.ms > failed.ms }, "\(run.summary)")
        #expect(
            steps.allSatisfy { $0.reason == "page-error" && $0.message?.contains("cannot open storage: VersionError") == true },
            "the page's uncaught error is the cause: \(run.summary)")
        #expect(steps.allSatisfy { ($0.waitedMs ?? 0) >= 4000 }, "each step after the startup timeout: \(run.summary)")
        let started = try #require(run.events.first { $0.event == "pageStarted" }, "\(run.summary)")
        #expect(started.version == "1.0.0" && started.steps == 2, "\(run.summary)")
        #expect(!run.events.contains { $0.event == "error" }, "\(run.summary)")
        #expect(run.lastSnapshot?.version == "1.0.0", "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
        let status = try await rig.status()
        #expect(status.current == .installed("1.0.0") && status.lastKnownGood == "1.0.0", "not rolled back to the seed")
    }
}

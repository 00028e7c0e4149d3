import ClientFoundation
import ClientUpdater
import Foundation
import SignedArchive
import TestSupport
import Testing

/// Issue 10, points 6, 7 and 8: a root without an embedded seed never locks `serve` out,
/// a failing `rollback` changes nothing, planted versions are not trusted, and a trial
/// whose pid was reused by an unrelated process does not block `serve`.
@Suite struct RootRecoveryTests {
    func run(_ arguments: [String], root: String) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(arguments + ["--root", root])
    }

    /// A root without a seed whose only version, 1.0.0, is on a (detached) trial that has
    /// already timed out: the next start fails it once, and since nothing else exists,
    /// keeps serving it instead of exiting 66 at every start.
    @Test func aFailedFirstTrialWithoutSeedKeepsServing() async throws {
        let f = try DeviceFixture()
        f.config.startupTimeoutSeconds = 0.2
        try await RootInitializer.write(f.config, to: f.layout, force: true, store: f.layout.clients)
        let root = f.layout.root
        try f.publish("1.0.0")
        await #expect(try run(["install"], root: root).status == 0)
        await #expect(try run(["reload"], root: root).status == 0)
        // The trial began long ago: its 0.2 s have passed (no waiting for the clock), on the
        // boot clock the next command times it on, and on the wall clock.
        var begun = StateStore.load(f.layout)
        let trial = try #require(begun.trial, "reload started a trial")
        let startedUptimeMs = try #require(trial.startedUptimeMs, "reload kept the trial's start on the boot clock")
        begun.trial?.startedUptimeMs = startedUptimeMs - 60_000
        begun.trial?.startedAt = trial.startedAt.addingTimeInterval(-60)
        try StateStore.save(begun, f.layout)
        for attempt in 1...2 {
            let serve = try await ServeProcess(root: root, scratch: f.tmp.path)
            let page = try await serve.get("/")
            #expect(page.status == 200 && page.body.contains(">1.0.0<"), "start \(attempt): \(page)")
            #expect(serve.stop() == 0)
        }
        let state = StateStore.load(f.layout)
        #expect(state.retry == ["1.0.0"] || state.blacklist == ["1.0.0"], "\(state)")
        #expect(state.current == "1.0.0")
    }

    @Test func rollbackWithNothingToGoBackToFailsAndChangesNothing() async throws {
        let f = try DeviceFixture()
        let root = f.layout.root
        try f.publish("1.0.0")
        for command in [["install"], ["reload"], ["ack"]] { #expect(try await run(command, root: root).status == 0) }
        let before = try f.snapshot()
        let result = try await run(["rollback"], root: root)
        #expect(result.status == 66, "\(result.errorOutput)")
        #expect(
            result.errorOutput
                == "clientctl: nothing to roll back to: 1.0.0 runs and there is no other last known good version and no embedded seed\n")
        let after = try f.snapshot()
        #expect(after == before, "\(after.difference(from: before))")
    }

    /// `clients/v9.9.9/` with a hand-written sidecar is not a version: sidecars are the
    /// signed manifest, verified again whenever they are read.
    @Test func aPlantedVersionIsNotTrusted() async throws {
        let f = try DeviceFixture()
        let root = f.layout.root
        try f.publish("1.0.0")
        await #expect(try run(["install"], root: root).status == 0)
        let planted = f.layout.clients + "/v9.9.9"
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: true)
        try Data("<html><head></head><body>planted</body></html>".utf8).write(to: URL(fileURLWithPath: planted + "/index.html"))
        try Data(#"{"version":"9.9.9","minShellVersion":"1.0.0"}"#.utf8).write(to: URL(fileURLWithPath: planted + ".json"))
        // A real signed sidecar copied under another version's name does not pass either.
        let copied = f.layout.clients + "/v9.9.8"
        try FileManager.default.copyItem(atPath: f.layout.clientDirectory(Version(1, 0, 0)), toPath: copied)
        try FileManager.default.copyItem(atPath: f.layout.clientSidecar(Version(1, 0, 0)), toPath: copied + ".json")

        let list = try await run(["list"], root: root)
        #expect(list.status == 0)
        #expect(!list.output.contains("9.9.9") && !list.output.contains("9.9.8") && list.output.contains("1.0.0"), "\(list.output)")
        let serve = try await ServeProcess(root: root, scratch: f.tmp.path)
        let page = try await serve.get("/")
        #expect(page.status == 200 && page.body.contains(">1.0.0<") && !page.body.contains("planted"), "\(page)")
        #expect(serve.stop() == 0)
    }

    /// Makes 1.0.0 the last known good version and 1.1.0 the current one, on trial.
    func rootWithTrial(_ f: DeviceFixture) async throws {
        let root = f.layout.root
        try f.publish("1.0.0")
        for command in [["install"], ["reload"], ["ack"]] { #expect(try await run(command, root: root).status == 0) }
        try f.publish("1.1.0")
        for command in [["install"], ["reload"]] { #expect(try await run(command, root: root).status == 0) }
    }

    /// An unrelated live process (a `sleep`) now holds the pid recorded in the trial.
    @Test(arguments: [false, true])
    func aTrialWhosePidWasReusedDoesNotBlockServe(_ pastDeadlineWithoutStartTime: Bool) async throws {
        let f = try DeviceFixture()
        try await rootWithTrial(f)
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["60"]
        try sleeper.runUnmasked()
        defer {
            sleeper.terminate()
            sleeper.waitUntilExit()
        }
        var state = StateStore.load(f.layout)
        var trial = try #require(state.trial)
        trial.pid = sleeper.processIdentifier
        trial.session = "an-earlier-serve"
        if pastDeadlineWithoutStartTime {
            trial.pidStart = nil  // a state written before start times were recorded …
            trial.startedUptimeMs = nil  // … and before the boot clock was kept …
            trial.startedAt = Date().addingTimeInterval(-3600)  // … an hour past its deadline
        } else {
            trial.pidStart = 1  // the owner started at another time than the sleeper
            trial.startedAt = Date()
        }
        state.trial = trial
        try StateStore.save(state, f.layout)

        let serve = try await ServeProcess(root: f.layout.root, scratch: f.tmp.path)
        let page = try await serve.get("/")
        #expect(page.status == 200 && page.body.contains(">1.0.0<"), "\(page)")
        #expect(serve.stop() == 0)
        let after = StateStore.load(f.layout)
        #expect(after.current == "1.0.0" && after.retry == ["1.1.0"], "\(after)")
    }
}

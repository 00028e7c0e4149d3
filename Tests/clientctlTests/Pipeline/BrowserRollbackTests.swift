import ClientUpdater
import Foundation
import TestSupport
import Testing

/// The watchdog in a real browser: headless Chromium loads pages from `clientctl serve`;
/// the pages' own scripts report startup complete (or throw before they can).
/// Fails with a message when Chromium is missing (`Scripts/test` installs it).
@Suite(.serialized) struct BrowserRollbackTests {
    @Test
    func goodVersionCommitsBrokenVersionIsRetriedOnceThenBlacklisted() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "browser")
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        var serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)

        // v1.0.0: first version, on trial until its page acknowledges.
        var dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.0.0")
        #expect(Chromium.text(of: "acked", in: dom) == "yes", "the page's startupDidComplete reached the server")
        var status = try await rig.waitForStatus { $0.lastKnownGood == "1.0.0" }
        #expect(status.current == .installed("1.0.0") && status.trial == nil)

        // v1.1.0 acknowledges: it becomes last known good.
        try await rig.publish("1.1.0", script: ReleaseRig.acknowledging)
        await #expect(try serve.control("check").status == 200)
        await #expect(try rig.status().pending == "1.1.0")
        await #expect(try serve.control("switch-to-pending").status == 200)
        dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.1.0")
        status = try await rig.waitForStatus { $0.lastKnownGood == "1.1.0" }
        #expect(status.current == .installed("1.1.0") && status.trial == nil)

        // A short startup timeout from here on (`serve --startup-timeout`); SIGTERM first.
        #expect(serve.stop(SIGTERM) == 0, "SIGTERM shuts serve down cleanly: \(serve.stderr)")
        serve = try await ServeProcess(root: rig.root, arguments: ["--startup-timeout", "5"], scratch: rig.tmp.path)
        await #expect(try rig.status().current == .installed("1.1.0"))

        // v1.2.0 throws before acknowledging: rolled back after the timeout, retried once.
        try await rig.publish("1.2.0", script: ReleaseRig.broken)
        await #expect(try serve.control("check").status == 200)
        await #expect(try serve.control("switch-to-pending").status == 200)
        dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.2.0")
        #expect(Chromium.text(of: "acked", in: dom) == "no")
        status = try await rig.waitForStatus { $0.trial == nil }
        #expect(status.current == .installed("1.1.0") && status.retry == ["1.2.0"] && status.blacklist.isEmpty)

        // The next check offers it again (the retry); it fails again: blacklisted.
        await #expect(try serve.control("check").status == 200)
        await #expect(try rig.status().pending == "1.2.0")
        await #expect(try serve.control("switch-to-pending").status == 200)
        dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.2.0")
        status = try await rig.waitForStatus { $0.trial == nil }
        #expect(status.current == .installed("1.1.0") && status.lastKnownGood == "1.1.0")
        #expect(status.blacklist == ["1.2.0"] && status.retry.isEmpty && status.pending == nil)

        // The page shows v1.1.0 again, and a check no longer offers v1.2.0.
        dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.1.0")
        await #expect(try serve.control("check").status == 200)
        await #expect(try rig.status().pending == nil)
        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
        #expect(serve.stderr.contains("1.2.0 did not report startup complete before the startup timeout; blacklisted"))
    }
}

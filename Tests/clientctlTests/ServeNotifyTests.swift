import Foundation
import TestSupport
import Testing

/// `clientctl serve` under systemd's notification protocol, as systemd sees it: the test
/// binds the datagram socket systemd would, hands it to the real binary as
/// `NOTIFY_SOCKET` with `WATCHDOG_USEC=400000` (a ping every 200 ms), and reads what comes.
@Suite struct ServeNotifyTests {
    static func watchdogs(_ messages: [[String: String]]) -> Int { messages.filter { $0["WATCHDOG"] == "1" }.count }

    @Test func readyStatusWatchdogPingsAndStoppingReachSystemd() async throws {
        let rig = try await ReleaseRig(startupTimeout: 600, label: "serve-notify")  // the trial ends by the test's acknowledgement only
        try await rig.publish("1.0.0", script: "")
        try await rig.run(["install", "--root", rig.root])
        let listener = try NotifyListener(path: rig.tmp("notify.sock"))
        let serve = try await ServeProcess(
            root: rig.root, scratch: rig.tmp.path, environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "400000"])
        let url = serve.baseURL

        let ready = try await listener.wait(for: "READY=1") { $0.contains { $0["READY"] == "1" } }
        #expect(ready.first?["READY"] == "1", "READY=1 comes first: \(listener.datagrams)")
        #expect(ready.first?["STATUS"] == "serving 1.0.0 (trial) on \(url)", "\(listener.datagrams)")
        try await listener.wait(for: "three WATCHDOG=1 pings") { Self.watchdogs($0) >= 3 }

        let acknowledged = try await Curl.request(
            url + "__clientctl/startup-complete", method: "POST",
            headers: ["X-Clientctl-Shim: 1", "Content-Type: application/json"], body: Data(#"{"version":"1.0.0"}"#.utf8))
        #expect(acknowledged.status == 200, "\(acknowledged)")
        try await listener.wait(for: "STATUS naming the committed version") { $0.contains { $0["STATUS"] == "serving 1.0.0 (committed) on \(url)" } }
        let pings = Self.watchdogs(listener.messages)
        try await listener.wait(for: "WATCHDOG=1 pings after the commit") { Self.watchdogs($0) >= pings + 2 }

        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
        let all = try await listener.wait(for: "STOPPING=1") { $0.contains { $0["STOPPING"] == "1" } }
        #expect(all.filter { $0["READY"] == "1" }.count == 1, "one READY=1: \(listener.datagrams)")
        #expect(all.allSatisfy { Set($0.keys).isSubset(of: ["READY", "STATUS", "WATCHDOG", "STOPPING"]) }, "\(listener.datagrams)")
        withExtendedLifetime(rig) {}
    }

    /// `WATCHDOG_PID` naming another process: serve sends no pings (READY and STOPPING still
    /// come). A second serve with the watchdog for itself is the clock: once it has pinged
    /// three times after the first one's READY, the first had time for several pings.
    @Test func noWatchdogPingsWhenWatchdogPIDNamesAnotherProcess() async throws {
        let other = try await ReleaseRig(startupTimeout: 600, label: "serve-notify-other")
        let clock = try await ReleaseRig(startupTimeout: 600, label: "serve-notify-clock")
        let silent = try NotifyListener(path: other.tmp("notify.sock"))
        let ticking = try NotifyListener(path: clock.tmp("notify.sock"))
        let reference = try await ServeProcess(
            root: clock.root, scratch: clock.tmp.path, environment: ["NOTIFY_SOCKET": ticking.address, "WATCHDOG_USEC": "400000"])
        let serve = try await ServeProcess(
            root: other.root, scratch: other.tmp.path,
            environment: ["NOTIFY_SOCKET": silent.address, "WATCHDOG_USEC": "400000", "WATCHDOG_PID": "\(getpid())"])

        let ready = try await silent.wait(for: "READY=1") { $0.contains { $0["READY"] == "1" } }
        #expect(ready.first?["STATUS"] == "serving embedded-1.0.0 (committed) on \(serve.baseURL)", "\(silent.datagrams)")
        let ticks = Self.watchdogs(ticking.messages)
        try await ticking.wait(for: "three pings of the reference serve") { Self.watchdogs($0) >= ticks + 3 }
        #expect(Self.watchdogs(silent.messages) == 0, "\(silent.datagrams)")

        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
        reference.stop(SIGTERM)
        try await silent.wait(for: "STOPPING=1") { $0.contains { $0["STOPPING"] == "1" } }
        #expect(Self.watchdogs(silent.messages) == 0, "\(silent.datagrams)")
        withExtendedLifetime((other, clock)) {}
    }
}

import Foundation
import TestSupport
import Testing

/// Errors after the acknowledgement with the shell's loopback origin
/// (docs/native-shell.md#errors-after-start): the page is `http://127.0.0.1:PORT/`, so a
/// script of another loopback server differs from it by its port alone. WebKit mutes that
/// script's error (the HTML standard's "muted errors" of a classic script fetched without
/// CORS), and the shell counts only the page's own, as with its custom scheme: the first
/// phase of ``throwingPage(otherOrigin:)``, a frame, that other origin, a forged event and
/// three errors of the page's own.
extension NativeShellTests {
    @Test func aLoopbackPageCountsOnlyItsOwnOriginsErrors() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "shell-loopback-errors")
        try Self.keepReports(rig)
        let other = try LoopbackHTTPServer { _ in .text("throw new Error('from another loopback port');\n", contentType: "text/javascript") }
        defer { other.stop() }
        try await rig.publish(
            "1.0.0", script: ShellHarness.paint(Self.green, then: Self.throwingPage(otherOrigin: other.baseURL.absoluteString)),
            extra: ["js/thrower.js": Data("throw new Error('thrown by a file');\n".utf8)])
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(
            root: rig.root, exitAfter: 180, arguments: ["--origin", "loopback", "--port", "0", "--snapshot", shot], scratch: rig.tmp.path)
        let events = try await shell.waitFor("the page's first errors", timeout: 120) { Self.result("phase1", in: $0) != nil }
        let uri = events.first { $0.event == "listening" }?.uri ?? ""
        #expect(uri.hasPrefix("http://127.0.0.1:") && !uri.hasPrefix("http://127.0.0.1:\(other.port)/"), "two loopback origins: \(uri)")
        _ = try Self.firstPhaseCountsTheOwnThree(events)
        let run = try await shell.stop(when: "the first errors counted", timeout: 60) { _ in true }
        #expect(run.status == 0, "\(run.summary)")
    }
}

import Foundation
import TestSupport
import Testing

/// Errors after the acknowledgement with the shell's loopback origin
/// (docs/native-shell.md#errors-after-start): the page is `http://127.0.0.1:PORT/`, so a
/// script of another loopback server differs from it by its port alone. WebKit mutes that
/// script's error (the HTML standard's "muted errors" of a classic script fetched without
/// CORS), and the shell counts only the page's own, as with its custom scheme.
extension NativeShellTests {
    /// After the acknowledgement: a frame that throws, another loopback origin's script that
    /// throws, and one error of the page's own.
    static func loopbackThrowingPage(otherOrigin: String) -> String {
        pageResult + """
            WebAppLocalServer.startupDidComplete(function () {
              (async function () {
                await wait(500);
                var frame = document.createElement('iframe');
                frame.srcdoc = '<script>throw new Error("in a frame");<\\/script>';
                document.body.appendChild(frame);
                var other = document.createElement('script'), otherRan = 'no';
                other.onload = function () { otherRan = 'yes'; };
                other.onerror = function () { otherRan = 'failed'; };
                other.src = '\(otherOrigin)/other.js';
                document.body.appendChild(other);
                setTimeout(function () { throw new Error('own after start'); });
                await wait(2500);
                result('done', 'origin=' + location.origin + ',other=' + otherRan);
              })();
            });
            """
    }

    @Test func aLoopbackPageCountsOnlyItsOwnOriginsErrors() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "shell-loopback-errors")
        let config = rig.root + "/config.json"
        var settings = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        settings["reportURL"] = "http://127.0.0.1:9/"  // reports kept in the journal (none sent)
        try JSONSerialization.data(withJSONObject: settings, options: [.sortedKeys]).write(to: URL(fileURLWithPath: config))
        chmod(config, 0o644)
        let other = try LoopbackHTTPServer { _ in .text("throw new Error('from another loopback port');\n", contentType: "text/javascript") }
        defer { other.stop() }
        try await rig.publish(
            "1.0.0", script: ShellHarness.paint(Self.green, then: Self.loopbackThrowingPage(otherOrigin: other.baseURL.absoluteString)))
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(
            root: rig.root, exitAfter: 180, arguments: ["--origin", "loopback", "--port", "0", "--snapshot", shot], scratch: rig.tmp.path)
        func done(_ events: [ShellHarness.Event]) -> String? {
            events.lazy.compactMap(\.action).first { $0.hasPrefix("result:done:") }.map { String($0.dropFirst("result:done:".count)) }
        }
        let events = try await shell.waitFor("the page's errors", timeout: 120) { done($0) != nil }
        let result = try #require(done(events))
        #expect(result.hasPrefix("origin=http://127.0.0.1:") && result.hasSuffix(",other=yes"), "the other port's script ran: \(result)")
        #expect(!result.contains("127.0.0.1:\(other.port),"), "the page and the script are of two loopback origins: \(result)")
        let posted = events.filter { $0.event == "pageErrors" }
        #expect(posted.reduce(0) { $0 + ($1.count ?? 0) } == 1, "\(posted.map { "\($0.count ?? 0) \($0.messages ?? [])" })")
        let messages = posted.flatMap { $0.messages ?? [] }
        #expect(messages.count == 1 && messages.allSatisfy { $0.contains("own after start") && $0.contains(" @ /:") }, "\(messages)")

        let run = try await shell.stop(when: "the page's errors posted", timeout: 60) { _ in true }
        #expect(run.status == 0, "\(run.summary)")
        let kept = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: rig.root + "/reports/page-errors.json"))) as? [String: Any])
        #expect(kept["version"] as? String == "1.0.0" && kept["problems"] as? Int == 1, "\(kept)")
    }
}

import Foundation
import TestSupport
import Testing

/// A page's errors after its acknowledgement in the native shell
/// (docs/native-shell.md#errors-after-start, docs/page-errors.md), in a real window under
/// Xvfb: counted in the page and posted about once a second, frames, other origins and
/// forged events left out, `reportProblem(kind)`, a flood of 10,000 errors a second, a web
/// process killed after the acknowledgement, and the count kept in `reports/page-errors.json`
/// when the shell stops. In `NativeShellTests` so that one window runs at a time.
extension NativeShellTests {
    /// The page's results, as refused bridge calls the shell logs (`error` events naming the action).
    static let pageResult = """
        function result(name, value) {
          window.webkit.messageHandlers.clientctl.postMessage({ action: 'result:' + name + ':' + value }).catch(function () {});
        }
        function wait(ms) { return new Promise(function (done) { setTimeout(done, ms); }); }
        """

    /// The first load: an error before the acknowledgement, then (once acknowledged) three
    /// that count, three that do not, the app's own kinds, and 3 s of 10,000 errors a second
    /// while it asks for the status; a reload only acknowledges.
    static func throwingPage(otherOrigin: String) -> String {
        pageResult + """
            var first = !localStorage.getItem('ran');
            localStorage.setItem('ran', '1');
            var frameRan = false;
            window.addEventListener('message', function (e) { if (e.data === 'frame ran') frameRan = true; });
            WebAppLocalServer.startupDidComplete(function () {
              if (!first) return;
              (async function () {
                await wait(500);
                var frame = document.createElement('iframe');
                frame.srcdoc = '<script>parent.postMessage("frame ran", "*"); throw new Error("in a frame");<\\/script>';
                document.body.appendChild(frame);
                var other = document.createElement('script'), otherRan = 'no';
                other.onload = function () { otherRan = 'yes'; };
                other.onerror = function () { otherRan = 'failed'; };
                other.src = '\(otherOrigin)/other.js';
                document.body.appendChild(other);
                var own = document.createElement('script');
                own.src = 'js/thrower.js?v=3';
                document.body.appendChild(own);
                setTimeout(function () { throw new Error('boom one'); });
                Promise.reject(new Error('rejected two'));
                window.dispatchEvent(new ErrorEvent('error', { message: 'forged', filename: location.href, lineno: 1 }));
                await wait(1500);
                result('phase1', 'frame=' + frameRan + ',other=' + otherRan);
                await WebAppLocalServer.reportProblem('bad kind!').then(function () { result('bad', 'resolved'); }, function (e) { result('bad', e.message); });
                await WebAppLocalServer.reportProblem('checkout-failed').then(function () { result('kind', 'ok'); }, function (e) { result('kind', e.message); });
                var thrown = 0, answers = 0, start = Date.now(), end = start + 3000, last = start;
                function thrower() { thrown++; last = Date.now(); throw new Error('flood'); }
                await new Promise(function (done) {
                  var asking = setInterval(function () { WebAppLocalServer.status().then(function () { answers++; }); }, 500);
                  var flood = setInterval(function () {
                    for (var i = 0; i < 40; i++) setTimeout(thrower, 0);
                    if (Date.now() > end) { clearInterval(flood); clearInterval(asking); done(); }
                  }, 4);
                });
                await wait(2000);
                result('flood', 'thrown=' + thrown + ',answers=' + answers + ',ms=' + (last - start));
              })();
            });
            throw new Error('before the acknowledgement');
            """
    }

    /// The value the page gave `result(name, value)`, nil before it did.
    static func result(_ name: String, in events: [ShellHarness.Event]) -> String? {
        events.lazy.compactMap(\.action).first { $0.hasPrefix("result:\(name):") }.map { String($0.dropFirst("result:\(name):".count)) }
    }

    /// The first phase of ``throwingPage(otherOrigin:)``, up to its `phase1` result: the
    /// frame and the other origin's script ran, and the shell posted the three errors of the
    /// page's own (none of the frame, the other origin or the forged event). Returns where
    /// the phase ended in `events` and the three messages.
    static func firstPhaseCountsTheOwnThree(
        _ events: [ShellHarness.Event], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (end: Int, messages: Set<String>) {
        #expect(
            result("phase1", in: events) == "frame=true,other=yes", "the frame and the other origin's script ran: \(events.map(\.description))",
            sourceLocation: sourceLocation)
        let end = try #require(events.firstIndex { $0.action?.hasPrefix("result:phase1:") == true }, sourceLocation: sourceLocation)
        let early = events[..<end].filter { $0.event == "pageErrors" }
        #expect(early.allSatisfy { $0.version == "1.0.0" }, "\(early.map(\.description))", sourceLocation: sourceLocation)
        #expect(
            early.reduce(0) { $0 + ($1.count ?? 0) } == 3, "\(early.map { "\($0.count ?? 0) \($0.messages ?? [])" })",
            sourceLocation: sourceLocation)
        let messages = Set(early.flatMap { $0.messages ?? [] })
        #expect(
            messages.count == 3 && messages.contains { $0.contains("boom one") && $0.contains(" @ /:") }
                && messages.contains("Unhandled rejection: rejected two")
                && messages.contains { $0.contains("thrown by a file") && $0.hasSuffix(" @ /js/thrower.js:1") },
            "\(messages)", sourceLocation: sourceLocation)
        return (end, messages)
    }

    /// Reports kept in the journal (a report URL where nothing answers, so none is sent):
    /// the agent counts the page's problems only where reports are on.
    static func keepReports(_ rig: ReleaseRig) throws {
        let config = rig.root + "/config.json"
        var settings = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: config))) as? [String: Any])
        settings["reportURL"] = "http://127.0.0.1:9/"
        try JSONSerialization.data(withJSONObject: settings, options: [.sortedKeys]).write(to: URL(fileURLWithPath: config))
        chmod(config, 0o644)
    }

    @Test func errorsAfterTheAcknowledgementAreCountedCoalescedAndKept() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "shell-page-errors")
        try Self.keepReports(rig)
        let other = try LoopbackHTTPServer { _ in .text("throw new Error('from another origin');\n", contentType: "text/javascript") }
        try await rig.publish(
            "1.0.0", script: ShellHarness.paint(Self.green, then: Self.throwingPage(otherOrigin: other.baseURL.absoluteString)),
            extra: ["js/thrower.js": Data("throw new Error('thrown by a file');\n".utf8)])
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(root: rig.root, exitAfter: 300, arguments: ["--snapshot", shot], scratch: rig.tmp.path)
        try await shell.waitFor("the first paint", timeout: 60) { $0.contains { $0.event == "firstPaint" } }
        let baseline = try #require(shell.shellPeakKiB, "the shell's VmHWM at the first paint")
        let events = try await shell.waitFor("the page's flood to end", timeout: 120) { Self.result("flood", in: $0) != nil }
        let peak = try #require(shell.shellPeakKiB, "the shell's VmHWM after the flood")

        // Before the flood: the three errors of the page's own scripts, nothing of the
        // frame, the other origin, the forged event or the error before the acknowledgement.
        let (phase1End, messages) = try Self.firstPhaseCountsTheOwnThree(events)
        // The app's own kinds: a bad one rejects naming why, a good one resolves.
        let bad = try #require(Self.result("bad", in: events), "\(events.map(\.description))")
        #expect(bad.hasPrefix("reportProblem: the kind 'bad kind!' may hold only letters"), "\(bad)")
        #expect(Self.result("kind", in: events) == "ok", "\(events.map(\.description))")
        // The flood: every error counted, at most about one message a second, three messages
        // each, the bridge answering, the shell's memory flat.
        let flood = try #require(Self.result("flood", in: events))
        var fields: [String: Int] = [:]
        for field in flood.split(separator: ",") {
            let parts = field.split(separator: "=")
            if parts.count == 2 { fields[String(parts[0])] = Int(parts[1]) }
        }
        let thrown = try #require(fields["thrown"])
        #expect(thrown >= 5_000, "a flood (10,000 a second asked; a loaded machine runs fewer): \(thrown) in 3 s")
        #expect((fields["answers"] ?? 0) >= 1, "the bridge answered the page's status calls during the flood: \(flood)")
        let late = events[phase1End...].filter { $0.event == "pageErrors" }
        #expect(late.reduce(0) { $0 + ($1.count ?? 0) } == thrown, "\(late.map { "\($0.count ?? 0)" }) for \(thrown)")
        let seconds = (fields["ms"] ?? 0) / 1000 + 1
        #expect(late.count <= seconds + 1, "about one post a second for \(seconds) s of flood: \(late.count)")
        #expect(late.allSatisfy { ($0.messages ?? []).count <= 3 }, "\(late.map { $0.messages ?? [] })")
        #expect(peak - baseline < 32 << 10, "the shell grew by \((peak - baseline) / 1024) MiB under the flood")
        #expect(events.contains { $0.event == "snapshot" && $0.version == "1.0.0" }, "the acknowledged page's snapshot")

        // Its web process killed after the acknowledgement: counted; the reload acknowledges
        // (a second load) and the shell stops: the period is kept for the next start.
        let snapshots = events.filter { $0.event == "snapshot" }.count
        for pid in shell.webProcesses { kill(pid, SIGKILL) }
        let run = try await shell.stop(when: "the reloaded page's acknowledgement", timeout: 120) { events in
            events.contains { $0.event == "webProcessTerminated" } && events.filter { $0.event == "snapshot" }.count > snapshots
        }
        #expect(run.status == 0, "\(run.summary)")
        let kept = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: rig.root + "/reports/page-errors.json"))) as? [String: Any])
        #expect(kept["version"] as? String == "1.0.0", "\(kept)")
        #expect((kept["problems"] as? Int) == 3 + 1 + thrown + 1, "three errors, one app kind, the flood, one death: \(kept)")
        #expect(Set(kept["messages"] as? [String] ?? []) == messages, "\(kept)")
        #expect(kept["loads"] as? Int == 2, "\(kept)")
        #expect((kept["usedMs"] as? Int ?? 0) > 0, "\(kept)")
    }
}

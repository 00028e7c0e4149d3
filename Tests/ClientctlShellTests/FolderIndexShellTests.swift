import Foundation
import TestSupport
import Testing

/// Folder indexes through the `app://` scheme (docs/native-shell.md#folder-pages): the
/// root page follows its own link to a folder, and that folder's page — shimmed like the
/// root's, its relative stylesheet resolved inside the folder — acknowledges start-up.
/// In `NativeShellTests` so that one window runs at a time.
extension NativeShellTests {
    /// A folder's page: painted by its relative `page.css`, acknowledging when `check` holds.
    static func folderPage(check: String = "true") -> Data {
        Data(
            """
            <!doctype html>
            <html><head><meta charset="utf-8"><link rel="stylesheet" href="page.css"><title>about</title></head>
            <body><p>about</p><script>
            var where = location.pathname + location.search + location.hash;
            if (\(check)) WebAppLocalServer.startupDidComplete();
            else window.webkit.messageHandlers.clientctl.postMessage({ action: 'failed:landed on ' + where }).catch(function () {});
            </script></body></html>

            """.utf8)
    }

    static let folderFiles = ["about/index.html": folderPage(), "about/page.css": Data("html, body { background: \(blue); }\n".utf8)]

    /// Adds a link to `href` to the page and follows it.
    static func follow(_ href: String) -> String {
        "var a = document.createElement('a'); a.href = '\(href)'; a.textContent = 'next'; document.body.appendChild(a); a.click();"
    }

    @Test func theRootPageOpensAFolderPageByItsLink() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-folder")
        // The root page never acknowledges: only about/index.html can.
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.red, then: Self.follow("about/")), extra: Self.folderFiles)
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let run = try await ShellHarness.run(root: rig.root, until: "the commit and its snapshot", arguments: ["--snapshot", shot]) { events in
            events.contains { $0.kind == "committed" } && events.contains { $0.event == "snapshot" }
        }
        #expect(run.status == 0, "\(run.summary)")
        #expect(!run.events.contains { $0.event == "error" || $0.event == "navigationRefused" }, "\(run.summary)")
        #expect(run.watchdog("committed", "1.0.0") != nil, "about/index.html acknowledged through its shim: \(run.summary)")
        #expect(run.lastSnapshot?.version == "1.0.0", "\(run.summary)")
        try await Self.expectColour(shot, Self.blue)
    }

    /// WebKitGTK shows a custom scheme's 301 instead of following it (a `fetch` sees the 301
    /// itself); the redirect's page goes on to `/about/` with the query and the fragment.
    @Test func aFolderNamedWithoutItsSlashIsRedirectedInTheShell() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-folder-redirect")
        let root = """
            function report(what) { return window.webkit.messageHandlers.clientctl.postMessage({ action: 'failed:' + what }).catch(function () {}); }
            fetch('/about?q=1', { cache: 'no-store' }).then(function (r) {
              if (r.status !== 301 || r.headers.get('location') !== '/about/?q=1') return report('fetch ' + r.status + ' ' + r.url);
            }, function (e) { return report('fetch ' + e.message); }).then(function () { \(Self.follow("about?q=1#part")) });
            """
        var files = Self.folderFiles
        files["about/index.html"] = Self.folderPage(check: "where === '/about/?q=1#part' && history.length === 2")
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.red, then: root), extra: files)
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let run = try await ShellHarness.run(root: rig.root, until: "the commit and its snapshot", arguments: ["--snapshot", shot]) { events in
            events.contains { $0.kind == "committed" } && events.contains { $0.event == "snapshot" }
        }
        let failed = run.events.first { $0.action?.hasPrefix("failed:") == true }
        #expect(failed == nil, "\(failed?.action ?? "")")
        #expect(run.watchdog("committed", "1.0.0") != nil, "\(run.summary)")
        #expect(run.lastSnapshot?.version == "1.0.0", "\(run.summary)")
        try await Self.expectColour(shot, Self.blue)
    }
}

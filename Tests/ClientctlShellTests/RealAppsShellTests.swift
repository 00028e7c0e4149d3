import Foundation
import TestSupport
import Testing

/// Real third-party static apps (`Scripts/real-apps`: a mkdocs-material site, JupyterLite)
/// in the shell's window under Xvfb, published as built in a folder of a release whose root
/// is our ``AppDriver`` page: the app's sub-pages load by the app's own links and scripts,
/// the driver reads the app's state, and the snapshot's pixels show the sub-page. In
/// `NativeShellTests`, so that one window runs at a time.
extension NativeShellTests {
    @Suite struct RealAppsShellTests {
        /// Material's default primary colour (indigo), its header's background.
        static let materialIndigo = "#4051b5"
        /// JupyterLab's `--jp-brand-color1`.
        static let jupyterBrandBlue = "#1976d2"
        /// The handbook's page markers (Scripts/real-apps): the front page's and the about page's.
        static let frontMarker = red
        static let aboutMarker = green

        @Test func aMkdocsMaterialSiteFollowsItsOwnLinkToAFolderPage() async throws {
            let app = try await RealApp.named(RealApp.mkdocsMaterial)
            let rig = try await ReleaseRig(startupTimeout: 30, label: "shell-real-mkdocs")
            try await app.publish("1.0.0", with: rig, mount: "handbook", driver: AppDriver.page(src: "handbook/", steps: RealApp.handbookSteps))
            try await rig.run(["install", "--root", rig.root])
            let shot = rig.tmp("shot.png")
            let run = try await ShellHarness.run(
                root: rig.root, until: "the commit and its snapshot", arguments: ["--snapshot", shot, "--check-interval", "0"]
            ) { events in events.contains { $0.kind == "committed" } && events.contains { $0.event == "snapshot" } }
            let failed = run.events.first { $0.action?.hasPrefix("failed:") == true }
            #expect(failed == nil, "\(failed?.action ?? "")")
            #expect(run.status == 0, "\(run.summary)")
            #expect(!run.events.contains { ["error", "navigationRefused", "bridgeRefused"].contains($0.event) }, "\(run.summary)")
            #expect(run.watchdog("committed", "1.0.0") != nil, "the driver acknowledged on the about page: \(run.summary)")
            #expect(run.lastSnapshot?.version == "1.0.0", "\(run.summary)")
            try await Self.expectPixel(shot, x: 300, y: 24, Self.materialIndigo)
            try await Self.expectPixel(shot, x: 400, y: 300, Self.aboutMarker)
        }

        @Test func jupyterLiteStartsTheLabFromItsRootPage() async throws {
            let app = try await RealApp.named(RealApp.jupyterLite)
            let rig = try await ReleaseRig(startupTimeout: 120, label: "shell-real-jupyterlite")
            try await app.publish(
                "1.0.0", with: rig, mount: "jupyterlite", driver: AppDriver.page(src: "jupyterlite/", steps: RealApp.jupyterLiteSteps))
            try await rig.run(["install", "--root", rig.root])
            let shot = rig.tmp("shot.png")
            let shell = try RunningShell(
                root: rig.root, exitAfter: 180, arguments: ["--snapshot", shot, "--check-interval", "0"], scratch: rig.tmp.path)
            let events = try await shell.waitFor("a snapshot or a failure", timeout: 150) { events in
                events.contains { $0.event == "snapshot" || $0.action?.hasPrefix("failed:") == true }
            }
            // Done: end the shell itself (xvfb-run then stops its display and exits).
            if let pid = shell.shellPID { kill(pid, SIGTERM) }
            _ = try await shell.finish()
            let summary = "events: \(events.map(\.description)); stderr: \(shell.stderrText)"
            let failed = events.first { $0.action?.hasPrefix("failed:") == true }
            #expect(failed == nil, "\(failed?.action ?? "")")
            #expect(!events.contains { ["error", "navigationRefused", "bridgeRefused"].contains($0.event) }, "\(summary)")
            #expect(events.contains { $0.event == "watchdog" && $0.kind == "committed" && $0.version == "1.0.0" }, "\(summary)")
            #expect(events.last { $0.event == "snapshot" }?.version == "1.0.0", "\(summary)")
            // JupyterLab's own colours where its layout puts them in a 1024 × 768 window: the
            // file browser's new-launcher button, the main area's border, the launcher.
            try await Self.expectPixel(shot, x: 60, y: 52, Self.jupyterBrandBlue)
            try await Self.expectPixel(shot, x: 287, y: 400, "#bdbdbd")
            try await Self.expectPixel(shot, x: 600, y: 500, "#ffffff")
        }

        /// Storage belongs to the origin, `app://<appId>`, not to a version: what 1.0.0 put
        /// in local storage and IndexedDB, 1.1.0 reads (docs/native-shell.md#running-a-web-app-well-in-the-shell).
        @Test func aNewVersionReadsWhatTheOldOneStored() async throws {
            let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-storage-versions")
            let store = """
                localStorage.setItem('written-by', '1.0.0');
                var open = indexedDB.open('notes', 1);
                open.onupgradeneeded = function () { open.result.createObjectStore('notes'); };
                open.onsuccess = function () {
                  var tx = open.result.transaction('notes', 'readwrite');
                  tx.objectStore('notes').put('a note of 1.0.0', 'first');
                  tx.oncomplete = function () { WebAppLocalServer.startupDidComplete(); };
                };
                """
            try await rig.publish("1.0.0", script: ShellHarness.paint(blue, then: store))
            try await rig.run(["install", "--root", rig.root])
            let first = try await ShellHarness.run(root: rig.root, until: "1.0.0 committed", arguments: ["--check-interval", "0"]) {
                $0.contains { $0.kind == "committed" }
            }
            #expect(first.watchdog("committed", "1.0.0") != nil, "\(first.summary)")

            let read = """
                function fail(what) { window.webkit.messageHandlers.clientctl.postMessage({ action: 'failed:' + what }).catch(function () {}); }
                var open = indexedDB.open('notes', 1);
                open.onerror = function () { fail('indexedDB ' + open.error); };
                open.onsuccess = function () {
                  var get = open.result.transaction('notes').objectStore('notes').get('first');
                  get.onsuccess = function () {
                    var state = [location.origin, localStorage.getItem('written-by'), get.result].join(' | ');
                    if (state !== 'app://\(rig.app) | 1.0.0 | a note of 1.0.0') return fail(state);
                    document.documentElement.style.background = document.body.style.background = '\(green)';
                    WebAppLocalServer.startupDidComplete();
                  };
                };
                """
            try await rig.publish("1.1.0", script: read)
            try await rig.run(["install", "--root", rig.root])
            let shot = rig.tmp("shot.png")
            let second = try await ShellHarness.run(
                root: rig.root, until: "1.1.0's trial to end, and a snapshot", arguments: ["--snapshot", shot, "--check-interval", "0"]
            ) { events in
                events.contains { $0.event == "watchdog" && $0.version == "1.1.0" && ["committed", "failed"].contains($0.kind ?? "") }
                    && events.contains { $0.event == "snapshot" }
            }
            let failed = second.events.first { $0.action?.hasPrefix("failed:") == true }
            #expect(failed == nil, "\(failed?.action ?? "")")
            #expect(second.watchdog("committed", "1.1.0") != nil, "\(second.summary)")
            try await NativeShellTests.expectColour(shot, green)
        }

        /// What JupyterLite's start-up did to the bridge, in a page of our own: allocations
        /// enough for a garbage collection before the page's first message. The wrapper of
        /// `window.webkit.messageHandlers.clientctl` that the top frame's script keyed is
        /// then collected unless something holds it; the next one would post without the key
        /// (refused as `notTopFrame`, the first paint's message too) and the trial would time out.
        @Test func thePageBridgeOutlivesAGarbageCollection() async throws {
            let rig = try await ReleaseRig(startupTimeout: 20, label: "shell-bridge-gc")
            let garbage = "var kept = 0; for (var i = 0; i < 3000; i++) kept += new Array(10000).fill(i).length;\n"
            try await rig.publish("1.0.0", script: ShellHarness.paint(green, then: garbage + ReleaseRig.acknowledging))
            try await rig.run(["install", "--root", rig.root])
            let run = try await ShellHarness.run(root: rig.root, until: "the commit and the first paint", arguments: ["--check-interval", "0"]) {
                events in events.contains { $0.kind == "committed" } && events.contains { $0.event == "firstPaint" }
            }
            #expect(run.watchdog("committed", "1.0.0") != nil, "\(run.summary)")
            #expect(run.events.contains { $0.event == "firstPaint" }, "\(run.summary)")
            #expect(!run.events.contains { $0.event == "bridgeRefused" }, "\(run.summary)")
        }

        /// Checks the pixel at `x`, `y` of `png` is `colour` (`#rrggbb`), within rounding.
        static func expectPixel(
            _ png: String, x: Int, y: Int, _ colour: String, sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            let pixel = try await PNGImage.pixel(png, x: x, y: y)
            let hex = Array(colour.dropFirst())
            let want = stride(from: 0, to: 6, by: 2).map { Int(String(hex[$0...$0 + 1]), radix: 16) ?? -1 }
            let got = [pixel.red, pixel.green, pixel.blue]
            #expect(
                zip(got, want).allSatisfy { abs($0 - $1) <= 8 }, "pixel \(x),\(y): \(got), expected \(want) (\(colour))",
                sourceLocation: sourceLocation)
        }
    }
}

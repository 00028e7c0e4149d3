import Foundation
import TestSupport

/// A real third-party static app built from PyPI packages by `Scripts/real-apps` (cached
/// in `.build-real-apps/`): mkdocs-material's site of a small handbook, and JupyterLite.
struct RealApp: Sendable {
    let name: String
    let version: String
    /// The built site.
    let folder: String

    static let mkdocsMaterial = "mkdocs-material"
    static let jupyterLite = "jupyterlite"

    /// The app `name`, built (or found in the cache) by `Scripts/real-apps`.
    static func named(_ name: String) async throws -> RealApp {
        let apps = try await built.value
        guard let app = apps.first(where: { $0.name == name }) else {
            throw HarnessError("Scripts/real-apps printed no \(name): \(apps)")
        }
        return app
    }

    /// `Scripts/real-apps` runs once per test process (a first build needs PyPI; a cached
    /// one takes a fraction of a second).
    private static let built = Task { () throws -> [RealApp] in
        let result = try await Subprocess.run(
            "bash", [ClientctlBinary.packagePath("Scripts/real-apps")], gate: nil, timeout: .seconds(1200))
        guard result.status == 0 else {
            throw HarnessError("Scripts/real-apps exited \(result.status): \(result.errorOutput.suffix(2000))")
        }
        return result.output.split(separator: "\n").compactMap { line -> RealApp? in
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            return parts.count == 3 ? RealApp(name: parts[0], version: parts[1], folder: parts[2]) : nil
        }
    }

    /// The front page (`/handbook/`, a folder index) follows its own link to `about/`;
    /// the about page has Material's stylesheet and bundle from `../assets/` and its
    /// search answers from a web worker.
    static let handbookSteps = [
        """
        function (w, d) {
          expect(w.location.pathname === '/handbook/' && d.title === 'Kiosk Handbook', 'the front page at /handbook/');
          var link = d.querySelector('.md-content a[href="about/"]');
          expect(link, "the front page's link to about/");
          link.click();
        }
        """,
        """
        function (w, d) {
          expect(w.location.pathname === '/handbook/about/', 'the about page at /handbook/about/');
          expect(d.title === 'About - Kiosk Handbook', "the about page's title");
          var header = getComputedStyle(d.querySelector('.md-header')).backgroundColor;
          expect(header === 'rgb(64, 81, 181)', "Material's indigo header (its stylesheet loaded from ../assets/): " + header);
          expect(typeof w.document$ === 'object', "Material's bundle ran");
          expect(d.getElementById('page-marker'), "the about page's marker");
          var input = d.querySelector('.md-search__input');
          input.value = 'deeper';
          input.dispatchEvent(new w.Event('input', { bubbles: true }));
          return waitFor('a search result for "deeper"', function () {
            return d.querySelector('.md-search-result__item a[href*="about/"]');
          }, 20).then(function () { input.value = ''; input.blur(); done(); });
        }
        """,
    ]

    /// JupyterLite's root (`/jupyterlite/`, a folder index) sends itself to
    /// `lab/index.html`; JupyterLab starts there, restores its layout and opens its launcher
    /// (on `app://`, without the service worker it registers under `serve`).
    static let jupyterLiteSteps = [
        """
        function (w, d) {
          expect(w.location.pathname === '/jupyterlite/', "JupyterLite's root at /jupyterlite/");
        }
        """,
        """
        function (w, d) {
          expect(w.location.pathname === '/jupyterlite/lab/index.html', 'the lab at /jupyterlite/lab/index.html');
          return waitFor('window.jupyterapp', function () { return w.jupyterapp; }, 90)
            .then(function (app) { return app.restored.then(function () { return app; }); })
            .then(function (app) {
              return waitFor('the launcher, the loading screens gone', function () {
                var lite = d.getElementById('jupyterlite-loading-indicator');
                return (!lite || w.getComputedStyle(lite).display === 'none') && !d.getElementById('jupyterlab-splash')
                  && d.querySelector('.jp-Launcher .jp-LauncherCard') && app;
              }, 30);
            })
            .then(function (app) {
              expect(app.name === 'JupyterLite', 'the app named JupyterLite: ' + app.name);
              var main = Array.from(app.shell.widgets('main')).map(function (widget) { return widget.title.label; });
              expect(main.join() === 'Launcher', 'the launcher alone in the main area: ' + main.join());
              return w.navigator.serviceWorker.getRegistrations();
            })
            .then(function (registrations) {
              // app:// has no service workers: JupyterLite runs without its own.
              if (w.location.protocol === 'app:') expect(registrations.length === 0, 'no service worker on app://');
              done();
            });
        }
        """,
    ]

    /// Publishes `version` with `rig`: the app, as built, in the folder `mount` of the
    /// release, and at its root `driver`, our page that runs it (``AppDriver``).
    func publish(_ version: String, with rig: ReleaseRig, mount: String, driver: Data) async throws {
        let dir = rig.tmp("build-\(version)")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder, toPath: dir + "/" + mount)
        try driver.write(to: URL(fileURLWithPath: dir + "/index.html"))
        try await rig.run([
            "publish", dir, "--app", rig.app, "--channel", "stable", "--version", version,
            "--min-shell", "1.0.0", "--key", rig.key + ".pem", "--out", rig.releases,
        ])
    }
}

/// Our page at the root of a release that holds a real app in a folder: it opens the app
/// in a frame the size of the window and, at each load of that frame, runs the next of its
/// steps on the frame's window and document. A step checks the app's own state (where it
/// is, its title, what its scripts and stylesheets did) and may click one of the app's own
/// links; nothing is injected into the app. The last step calls `done()`, which
/// acknowledges start-up two frames later (so the shell's snapshot shows the app's page)
/// and, once the host answered, writes `ok: …` into `<p id="verdict">`. A failed check
/// writes `failed: …` there and, in the shell, posts it as a message the bridge refuses
/// (an `error` event naming it).
enum AppDriver {
    /// - Parameters:
    ///   - src: the app's first page, relative to the root (`handbook/`; no quotes).
    ///   - steps: JavaScript functions `function (w, d) { … }`, one per load of the frame;
    ///     in them, `expect(condition, what)` fails the run, `waitFor(what, test, seconds)`
    ///     is a promise of `test()`'s first truthy value (polled every 50 ms) and `done()`
    ///     ends it.
    static func page(src: String, steps: [String]) -> Data {
        Data(
            """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>driver</title>
            <style>html, body { margin: 0; height: 100%; background: #0000c8; }
            #app { position: fixed; left: 0; top: 0; width: 100%; height: 100%; border: 0; }
            #verdict { position: fixed; bottom: 0; }</style></head>
            <body><p id="verdict">running</p><iframe id="app"></iframe><script>
            (function () {
              var frame = document.getElementById('app'), loads = 0, over = false;
              var verdict = document.getElementById('verdict');
              function state() {
                var w = frame.contentWindow, d = frame.contentDocument;
                return 'load ' + loads + ' at ' + (w ? w.location.pathname : '?') + ' titled "' + (d ? d.title : '?') + '"';
              }
              function fail(what) {
                if (over) return;
                over = true;
                verdict.textContent = 'failed: ' + what + ' (' + state() + ')';
                var h = window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.clientctl;
                if (h) h.postMessage({ action: 'failed:' + verdict.textContent }).catch(function () {});
              }
              function expect(condition, what) { if (!condition) throw new Error(what); }
              function waitFor(what, test, seconds) {
                var deadline = Date.now() + seconds * 1000;
                return new Promise(function (resolve, reject) {
                  (function poll() {
                    var value;
                    try { value = test(); } catch (e) { value = null; }
                    if (value) resolve(value);
                    else if (Date.now() > deadline) reject(new Error('no ' + what + ' within ' + seconds + ' s'));
                    else setTimeout(poll, 50);
                  })();
                });
              }
              function done() {
                if (over) return;
                over = true;
                var reached = state();
                verdict.textContent = 'acknowledging: ' + reached;
                requestAnimationFrame(function () {
                  requestAnimationFrame(function () {
                    WebAppLocalServer.startupDidComplete(function () { verdict.textContent = 'ok: ' + reached; });
                  });
                });
              }
              var steps = [
            \(steps.joined(separator: ",\n"))
              ];
              frame.addEventListener('load', function () {
                var step = steps[loads++];
                if (!step) return fail('a load no step expected');
                Promise.resolve().then(function () { return step(frame.contentWindow, frame.contentDocument); })
                  .catch(function (e) { fail(e.message); });
              });
              frame.src = '\(src)';
            })();
            </script></body></html>

            """.utf8)
    }
}

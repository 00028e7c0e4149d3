import ClientUpdater
import Foundation
import TestSupport
import Testing

/// A user's first day with a Meteor 3 app, through the `clientctl` binary, against a
/// server shaped like meteor/meteor release-3.1.0 (``MeteorMockServer/Style/webapp``:
/// packages/webapp/webapp_server.js routes and headers, tools/isobuild/bundler.js salted
/// hashes, packages/autoupdate/autoupdate_server.js versions, the
/// packages/boilerplate-generator/template-web.cordova.js page): `init --meteor-url`,
/// `install` v1→v2 fetching only what changed, `reload`, `serve`, Chromium runs the
/// bundle; then a CSS-only change, a settings-only change and a rolling deploy.
@Suite(.serialized) struct MeteorCurrentServerBinaryTests {
    final class Rig: @unchecked Sendable {
        // @unchecked: owned by one test at a time.
        let tmp: TemporaryDirectory
        let fixtures: MeteorScenarioFixtures
        let mock: MeteorMockServer
        let http: LoopbackHTTPServer
        var root: String { tmp.path + "/device" }

        init() throws {
            tmp = try TemporaryDirectory("meteor-current-e2e")
            fixtures = try MeteorScenarioFixtures.write(.current, to: tmp.path + "/fixtures")
            mock = MeteorMockServer(versionsDirectory: fixtures.versions, style: .webapp)
            http = try LoopbackHTTPServer(handler: mock.loopbackHandler())
        }

        deinit { http.stop() }

        /// Adds a server state: `content` rendered in the current shape, optionally with the
        /// index.html of another version (a load balancer between two deploys).
        func add(_ name: String, _ content: MeteorAppContent, indexOf other: MeteorAppContent? = nil) throws -> MeteorRenderedVersion {
            let v = MeteorShapedApp.render(content, shape: .current)
            try MeteorScenarioFixtures.writeServer(v, to: fixtures.versions + "/" + name)
            if let other {
                try MeteorAppGenerator.write(MeteorShapedApp.render(other, shape: .current).indexHTML, fixtures.versions + "/" + name + "/index.html")
            }
            return v
        }

        /// `clientctl install` with the server on `name`; the paths it requested.
        func install(_ name: String) async throws -> (result: Subprocess.Result, requests: [String]) {
            mock.serve(name)
            mock.clearRequests()
            let result = try await ClientctlBinary.run(["install", "--root", root])
            return (result, mock.requestedPaths)
        }

        func run(_ arguments: [String]) async throws -> Subprocess.Result {
            let result = try await ClientctlBinary.run(arguments + ["--root", root])
            guard result.status == 0 else { throw HarnessError("clientctl \(arguments) exited \(result.status): \(result.errorOutput)") }
            return result
        }

        func status() async throws -> [String: Any] {
            try await require(JSONSerialization.jsonObject(with: run(["status", "--json"]).stdout) as? [String: Any])
        }
    }

    /// The `src` of every `<script>` in a page.
    static func scriptSources(_ html: String) -> [String] {
        html.components(separatedBy: "<script").dropFirst().compactMap { tag in
            guard let end = tag.firstIndex(of: ">"), let src = tag[..<end].range(of: "src=\"") else { return nil }
            return String(tag[src.upperBound...].prefix { $0 != "\"" })
        }
    }

    @Test
    func aMeteor3AppUpdatesSelectivelyAndRunsInChromium() async throws {
        let rig = try Rig()
        let made = try await ClientctlBinary.run([
            "init", "--root", rig.root, "--meteor-url", rig.http.baseURL.absoluteString + "/",
            "--embedded", rig.fixtures.embedded,
        ])
        #expect(made.status == 0, "\(made.errorOutput)")

        // v1 → v2: the bundle (script, map, stats) and two public files changed; the CSS and
        // the other public files are the embedded ones. Each file is fetched once, though
        // public files are listed twice.
        let v2 = try rig.fixtures.rendered("version2")
        let first = try await rig.install("version2")
        #expect(first.result.status == 0, "\(first.result.errorOutput)")
        let expected =
            ["/__cordova/manifest.json", "/__cordova/"]
            + (try rig.fixtures.changedScriptDownloads("version2")
            + ["/__cordova/some-file", "/__cordova/some-other-file"]).map { "/__cordova" + $0 }
        #expect(first.requests.sorted() == expected.sorted(), "only changed assets are fetched, once each")
        await #expect(try rig.status()["pending"] as? String == "version2")
        _ = try await rig.run(["reload"])

        // serve: every script of the bundle answers 200 with its bytes; the page starts.
        let serve = try await ServeProcess(root: rig.root, arguments: ["--startup-timeout", "120"], scratch: rig.tmp.path)
        let page = try await Curl.request(serve.baseURL)
        #expect(page.status == 200)
        let sources = Self.scriptSources(page.body).filter { $0 != "/cordova.js" }  // the shell's, not the bundle's
        #expect(sources.count == v2.scriptURLPaths.count && !sources.isEmpty)
        for src in sources {
            let answer = try await Curl.request(serve.baseURL + String(src.dropFirst()))
            let path = String(src.split(separator: "?")[0])
            #expect(answer.status == 200, "\(src)")
            #expect(answer.data == v2.file(at: path)?.bytes, "\(src) serves the bundle's bytes")
        }
        let dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "started", in: dom) == "yes", "the bundle's startupDidComplete reached serve")
        #expect(serve.stop() == 0, "\(serve.stderr)")
        await #expect(try rig.status()["lastKnownGood"] as? String == "version2")

        // A CSS-only change: the stylesheet, its map and index.html.
        var css = MeteorScenarioFixtures.content(2, version: "version2-css")
        css.css = "body { color: #c00; }\n"
        let cssVersion = try rig.add("version2-css", css)
        let cssInstall = try await rig.install("version2-css")
        #expect(cssInstall.result.status == 0, "\(cssInstall.result.errorOutput)")
        let cssFiles = cssVersion.files.filter { $0.type == "css" || ($0.type == "map" && $0.path.hasSuffix(".css.map")) }
        #expect(Set(cssInstall.requests) == Set(["/__cordova/manifest.json", "/__cordova/"] + cssFiles.map { "/__cordova" + $0.urlPath }))
        #expect(cssInstall.requests.count == 4)
        _ = try await rig.run(["reload"])
        _ = try await rig.run(["ack"])

        // A settings-only change (Meteor.settings.public): a new version, only index.html.
        var settings = css
        settings.version = "version2-settings"
        settings.publicSettings = #"{"greeting":"hello"}"#
        _ = try rig.add("version2-settings", settings)
        let settingsInstall = try await rig.install("version2-settings")
        #expect(settingsInstall.result.status == 0, "\(settingsInstall.result.errorOutput)")
        #expect(settingsInstall.requests == ["/__cordova/manifest.json", "/__cordova/"])
        _ = try await rig.run(["reload"])
        _ = try await rig.run(["ack"])

        // A rolling deploy: the manifest of version3, the index page of the old version.
        var v3 = MeteorScenarioFixtures.content(3)
        v3.css = css.css
        _ = try rig.add("rolling", v3, indexOf: settings)
        let rolling = try await rig.install("rolling")
        #expect(rolling.result.status == 75, "temporary: \(rolling.result.errorOutput)")
        #expect(rolling.result.errorOutput.contains("expected: version3, actual: version2-settings"))
        let after = try await rig.status()
        #expect(after["pending"] == nil || after["pending"] is NSNull)
        #expect((after["blacklist"] as? [String])?.isEmpty != false && after["current"] as? String == "version2-settings")
        // The deploy finishes: the next install takes version3.
        _ = try rig.add("version3", v3)
        let later = try await rig.install("version3")
        #expect(later.result.status == 0, "\(later.result.errorOutput)")
        await #expect(try rig.status()["pending"] as? String == "version3")
    }
}

private func require<T>(_ value: T?) throws -> T {
    guard let value else { throw HarnessError("unexpected nil") }
    return value
}

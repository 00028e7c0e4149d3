import Foundation
import TestSupport
import Testing

/// `clientctl init --meteor-url` and `clientctl serve` as a user runs them, on a Meteor
/// app's bundled www (generated in the legacy shape; the reference plugin's under
/// `Scripts/meteor-reference-replay`): a sample of the serving scenarios through the real
/// binary (the full 2–26 set runs against the same server in-process in ClientServerTests).
@Suite struct MeteorServeBinaryTests {
    @Test(arguments: MeteorFixtureSource.legacyAndReference)
    func initAndServeAMeteorRootWithTheBinary(source: MeteorFixtureSource) async throws {
        let fixtures = try source.materialize()
        let tmp = try TemporaryDirectory("meteor-serve")
        let www = tmp("www")
        let copy = try await Subprocess.run("cp", ["-R", fixtures.bundledWWW, www])
        #expect(copy.status == 0)
        _ = try await Subprocess.run("chmod", ["-R", "u+w", www])
        let made = try await ClientctlBinary.run([
            "init", "--root", tmp("device"), "--meteor-url", "http://127.0.0.1:9/",
            "--embedded", www + "/application",
        ])
        #expect(made.status == 0, "\(made.errorOutput)")
        #expect(made.errorOutput.contains(fixtures.appId), "appId read from the embedded index.html")

        let serve = try await ServeProcess(root: tmp("device"), scratch: tmp.path)
        let base = serve.baseURL
        let index = try await Curl.request(base)
        #expect(index.status == 200)
        #expect(index["content-type"]?.hasPrefix("text/html") == true)
        #expect(index.body.contains(fixtures.title))
        #expect(index.body.components(separatedBy: "data-clientctl-shim").count == 2, "the shim is injected once")

        let someFile = try await Curl.request(base + "some-file")
        let expected = try String(contentsOfFile: www + "/application/app/some-file", encoding: .utf8)
        #expect(someFile.status == 200 && someFile.body == expected)

        let plugins = try await Curl.request(base + "cordova_plugins.js")
        #expect(plugins.status == 200)
        #expect(plugins.body == (try String(contentsOfFile: www + "/cordova_plugins.js", encoding: .utf8)))

        let script = try fixtures.cacheBustedScript()
        for path in ["anything", "application" + script.urlPath, "not-in-manifest", "application/not-in-manifest"] {
            let fallback = try await Curl.request(base + path)
            #expect(fallback.status == 200 && fallback.body.contains(fixtures.title), "/\(path) falls back to index.html")
        }
        await #expect(try Curl.request(base + "favicon.ico").status == 404)

        let hashed = try await Curl.request(base + script.urlPath.dropFirst() + "?" + script.hash)
        #expect(hashed.status == 200)
        #expect(hashed["cache-control"]?.contains("max-age=31536000") == true)
        let etag = try #require(hashed["etag"])
        #expect(etag.contains(script.hash))
        let revalidated = try await Curl.request(base + script.urlPath.dropFirst(), headers: ["If-None-Match: \(etag)"])
        #expect(revalidated.status == 304)

        #expect(serve.stop() == 0, "SIGTERM stops serve cleanly: \(serve.stderr)")
    }
}

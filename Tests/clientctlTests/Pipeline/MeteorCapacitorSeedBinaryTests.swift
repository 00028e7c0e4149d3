import ClientUpdater
import Foundation
import TestSupport
import Testing

/// A Meteor developer's app bundled by `@meteorjs/capacitor` (Fixtures/meteor/capacitor),
/// through the `clientctl` binary, against a server shaped like Meteor 3
/// (``MeteorMockServer/Style/webapp``: webapp_server.js routes and `ETag`s) on 127.0.0.1,
/// counting the files and bytes the server sent: `init` refuses an `hcp: "none"` build in
/// one line; the same build costs no asset file and `status` says why a "new" version was
/// taken; `serve` answers the server's URLs with the seed's bytes; a next version costs
/// exactly its changed files. BENCHMARKS.md#a-seed-built-by-meteorjscapacitor has the figures
/// (`CLIENTCTL_BENCH_OUT` receives them).
@Suite(.serialized) struct MeteorCapacitorSeedBinaryTests {
    /// One install's cost as the server counted it.
    struct Cost {
        var requests: [String]
        var bytes: Int64
        /// Requests for asset files (neither the manifest nor index.html).
        var assetFiles: Int { requests.filter { $0 != "/__cordova/manifest.json" && $0 != "/__cordova/" }.count }
    }

    @Test func aCapacitorSeedUpdatesWithoutDownloadingWhatItShips() async throws {
        let tmp = try TemporaryDirectory("meteor-capacitor-e2e")
        let fixtures = MeteorCapacitorFixtures(root: MeteorFixtures.generated + "/capacitor")
        let mock = MeteorMockServer(versionsDirectory: fixtures.versions, style: .webapp)
        let http = try LoopbackHTTPServer(handler: mock.loopbackHandler())
        defer { http.stop() }
        let root = tmp.path + "/device"
        let url = http.baseURL.absoluteString + "/"

        // hcp "none": one line naming the setting, exit 78 (configuration), no root written.
        let refused = try await ClientctlBinary.run(["init", "--root", root, "--meteor-url", url, "--embedded", fixtures.seedWithoutHCP])
        #expect(refused.status == 78, "\(refused.errorOutput)")
        let line = refused.errorOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!line.contains("\n") && line.contains(#"meteor.capacitor.hcp is "none""#) && line.contains(#""webapp""#), "\(line)")
        #expect(!FileManager.default.fileExists(atPath: root + "/config.json"))

        let made = try await ClientctlBinary.run(["init", "--root", root, "--meteor-url", url, "--embedded", fixtures.seed])
        #expect(made.status == 0, "\(made.errorOutput)")
        let seedFiles = Set(MeteorShapedApp.render(MeteorCapacitorFixtures.content(1), shape: .current).files.map(\.path))

        func install(_ name: String, at device: String) async throws -> Cost {
            mock.serve(name)
            mock.clearRequests()
            http.clearLog()
            let result = try await ClientctlBinary.run(["install", "--root", device])
            #expect(result.status == 0, "\(name): \(result.errorOutput)")
            let log = try await http.settledLog()
            return Cost(requests: mock.requestedPaths, bytes: log.reduce(0) { $0 + $1.bodyBytesSent })
        }
        func run(_ arguments: [String]) async throws -> Subprocess.Result {
            let result = try await ClientctlBinary.run(arguments + ["--root", root])
            #expect(result.status == 0, "clientctl \(arguments): \(result.errorOutput)")
            return result
        }

        // The same build, versioned otherwise by the server: the manifest and index.html.
        let same = try await install("same_build", at: root)
        #expect(same.assetFiles == 0, "\(same.requests)")
        #expect(Set(same.requests) == ["/__cordova/manifest.json", "/__cordova/"])
        let status = try JSONSerialization.jsonObject(with: try await run(["status", "--json"]).stdout) as? [String: Any]
        #expect((status?["channelNote"] as? String)?.contains("AUTOUPDATE_VERSION") == true, "\(String(describing: status))")
        #expect(try await run(["status"]).output.contains("note:            version "))
        _ = try await run(["reload"])
        _ = try await run(["ack"])

        // serve: the page's scripts and stylesheet, at the server's URLs, are the seed's bytes.
        let sameBuild = try fixtures.rendered("same_build")
        let serve = try await ServeProcess(root: root, arguments: ["--startup-timeout", "120"], scratch: tmp.path)
        for file in sameBuild.files where ["js", "css"].contains(file.type) {
            let answer = try await Curl.request(serve.baseURL + String(file.urlPath.dropFirst()))
            #expect(answer.status == 200 && answer.data == file.bytes, "\(file.urlPath)")
        }
        #expect(serve.stop() == 0, "\(serve.stderr)")

        // A next version: exactly its changed files, after the renamed build and straight
        // from the seed (a second device).
        let changed = try fixtures.changedFiles("next_version")
        let expected = (["/__cordova/manifest.json", "/__cordova/"] + changed.map { "/__cordova" + $0.urlPath }).sorted()
        let next = try await install("next_version", at: root)
        #expect(next.requests.sorted() == expected)
        let second = tmp.path + "/second"
        #expect(try await ClientctlBinary.run(["init", "--root", second, "--meteor-url", url, "--embedded", fixtures.seed]).status == 0)
        let fromSeed = try await install("next_version", at: second)
        #expect(fromSeed.requests.sorted() == expected)
        #expect(fromSeed.assetFiles == changed.count)
        let after = try JSONSerialization.jsonObject(with: try await run(["status", "--json"]).stdout) as? [String: Any]
        #expect(after?["channelNote"] == nil || after?["channelNote"] is NSNull, "a real update has no note")

        MeteorBenchmarkOutput.emit(
            """
            Seed built by @meteorjs/capacitor (\(seedFiles.count) files), Meteor 3-shaped server, clientctl at \(ClientctlBinary.path):

            | install | asset files fetched | requests | bytes |
            |---|---|---|---|
            | the same build (server's own version) | \(same.assetFiles) of \(seedFiles.count) | \(same.requests.count) | \(same.bytes) |
            | a next version (\(changed.count) files changed), from the seed | \(fromSeed.assetFiles) of \(seedFiles.count) | \(fromSeed.requests.count) | \(fromSeed.bytes) |
            | the same next version, after the same build | \(next.assetFiles) of \(seedFiles.count) | \(next.requests.count) | \(next.bytes) |

            """)
    }
}

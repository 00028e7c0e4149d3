import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

/// The Meteor update benchmark behind `Scripts/bench/meteor` (BENCHMARKS.md): a generated
/// app of 1,000 assets where 10 change, updated over real HTTP on 127.0.0.1 with the
/// production transport. Bytes and requests are compared with the optimum (manifest +
/// index.html + the 10 changed assets) and the wall time with downloading every asset.
/// `swift test` runs each once (the request and byte counts are asserted; timings are not);
/// `CLIENTCTL_BENCH=1` (Scripts/bench/meteor) repeats them and writes the tables.
@Suite struct MeteorBenchmark {
    static let spec = MeteorAppGenerator.Spec(assets: 1000, assetSize: 4096, changedPerVersion: 10, scriptChanges: false)
    static let runs =
        ProcessInfo.processInfo.environment["CLIENTCTL_BENCH"] == "1"
        ? Int(ProcessInfo.processInfo.environment["CLIENTCTL_BENCH_RUNS"] ?? "") ?? 5 : 1

    struct Run {
        var requests: Int
        var bytes: Int64
        var seconds: Double
    }

    /// One check from `embedded` to `gen2` on a fresh root.
    static func update(embedded: String, versions: String, style: MeteorMockServer.Style = .pluginMock) async throws -> Run {
        let temp = try TemporaryDirectory("meteor-bench")
        let mock = MeteorMockServer(versionsDirectory: versions, style: style)
        mock.serve("gen2")
        let server = try LoopbackHTTPServer(handler: mock.loopbackHandler())
        defer { server.stop() }
        let layout = RootLayout(root: temp.path + "/root")
        try AtomicFile.makeDirectory(layout.root)
        let channel = MeteorChannel(
            layout: layout, rootURL: server.baseURL, platform: .ios, embeddedPath: embedded,
            transport: DefaultTransport(), options: .init(logger: .quiet))
        var state = DeviceState()
        let start = Date()
        let outcome = try await channel.check(state: &state)
        let seconds = Date().timeIntervalSince(start)
        guard case .installed = outcome else { throw HarnessError("not installed: \(outcome)") }
        // The byte counts as the server finished sending, not as far as its threads had
        // recorded them when the client had read everything.
        let log = try await server.settledLog()
        return Run(requests: log.count, bytes: log.reduce(0) { $0 + $1.bodyBytesSent }, seconds: seconds)
    }

    @Test func updateOfTenChangedAssetsAmongOneThousand() async throws {
        let temp = try TemporaryDirectory("meteor-bench-app")
        let g = MeteorAppGenerator.self
        try g.writeEmbedded(Self.spec, version: "gen1", to: temp.path + "/embedded")
        try g.writeDownloadable(Self.spec, generation: 2, version: "gen2", to: temp.path + "/versions/gen2")
        // The baseline: an embedded bundle sharing no asset, so every asset is downloaded.
        let empty = temp.path + "/empty"
        try g.write(
            Data(
                #"{"format":"web-program-pre1","version":"empty","cordovaCompatibilityVersions":{"android":"\#(g.compatAndroid)","ios":"\#(g.compatIOS)"},"manifest":[]}"#
                    .utf8), empty + "/program.json")
        try g.write(g.indexHTML(Self.spec, version: "empty"), empty + "/index.html")

        // The optimum: manifest + index.html + exactly the assets whose content changed.
        let old = Dictionary(uniqueKeysWithValues: g.files(Self.spec, generation: 1).map { ($0.url, $0.bytes) })
        let changed = g.files(Self.spec, generation: 2).filter { old[$0.url] != $0.bytes }
        let manifestBytes = Int64(g.manifest(Self.spec, generation: 2, version: "gen2").count)
        let indexBytes = Int64(g.indexHTML(Self.spec, version: "gen2").count)
        let optimumBytes = manifestBytes + indexBytes + changed.reduce(0) { $0 + Int64($1.bytes.count) }
        let optimumRequests = 2 + changed.count
        let allFiles = g.files(Self.spec, generation: 2)

        var updates: [Run] = []
        var fulls: [Run] = []
        for _ in 0..<Self.runs {
            updates.append(try await Self.update(embedded: temp.path + "/embedded", versions: temp.path + "/versions"))
            fulls.append(try await Self.update(embedded: empty, versions: temp.path + "/versions"))
        }
        let update = updates[0]
        let full = fulls[0]
        #expect(changed.count == 10)
        #expect(update.requests == optimumRequests && update.bytes == optimumBytes)
        #expect(full.requests == 2 + allFiles.count)

        func median(_ runs: [Run]) -> Double { runs.map(\.seconds).sorted()[runs.count / 2] }
        let report = """
            | measure | update (10 of \(Self.spec.assets) changed) | optimum | full download |
            |---|---|---|---|
            | requests | \(update.requests) | \(optimumRequests) | \(full.requests) |
            | bytes | \(update.bytes) | \(optimumBytes) | \(full.bytes) |
            | ratio to optimum (bytes / requests) | \(String(format: "%.2f", Double(update.bytes) / Double(optimumBytes))) / \(String(format: "%.2f", Double(update.requests) / Double(optimumRequests))) | 1.00 / 1.00 | \(String(format: "%.2f", Double(full.bytes) / Double(optimumBytes))) / \(String(format: "%.2f", Double(full.requests) / Double(optimumRequests))) |
            | wall time, median of \(Self.runs) (s) | \(String(format: "%.3f", median(updates))) | – | \(String(format: "%.3f", median(fulls))) |

            """
        Self.emit("Legacy-shape app (content SHA-1 hashes, plugin-style mock):\n\n" + report)
    }

    /// Appends `text` to the benchmark's output file.
    static func emit(_ text: String) {
        guard let out = ProcessInfo.processInfo.environment["CLIENTCTL_BENCH_OUT"], let handle = FileHandle(forWritingAtPath: out) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data((text + "\n").utf8))
    }

    /// The same update on an app in the current Meteor shape (meteor/meteor release-3.1.0:
    /// salted hashes, `/__cordova` URLs, each `public/` file listed twice, production bundle
    /// with `.stats.json`) served like packages/webapp/webapp_server.js.
    @Test func updateOfTenChangedAssetsAmongOneThousandOnACurrentMeteorServer() async throws {
        let temp = try TemporaryDirectory("meteor-bench-current")
        func content(_ generation: Int, version: String) -> MeteorAppContent {
            var c = MeteorScenarioFixtures.content(1, version: version)
            c.publicFiles = (0..<1000).map { i in
                let head = "asset \(i) generation \(i < 10 ? generation : 1)\n"
                return ("assets/d\(i / 100)/asset-\(i).txt", Data((head + String(repeating: "x", count: 4096 - head.utf8.count)).utf8))
            }
            return c
        }
        let v1 = MeteorShapedApp.render(content(1, version: "gen1"), shape: .current)
        let v2 = MeteorShapedApp.render(content(2, version: "gen2"), shape: .current)
        try MeteorScenarioFixtures.writeOnDevice(v1, to: temp.path + "/embedded")
        try MeteorScenarioFixtures.writeServer(v2, to: temp.path + "/versions/gen2")
        var empty = content(1, version: "empty")
        (empty.scripts, empty.css, empty.publicFiles) = ([], "", [])
        let emptyBundle = MeteorShapedApp.render(empty, shape: .current)
        try MeteorAppGenerator.write(
            Data(
                #"{"format":"web-program-pre1","version":"empty","cordovaCompatibilityVersions":{"android":"\#(MeteorAppGenerator.compatAndroid)","ios":"\#(MeteorAppGenerator.compatIOS)"},"manifest":[]}"#
                    .utf8), temp.path + "/empty/program.json")
        try MeteorAppGenerator.write(emptyBundle.indexHTML, temp.path + "/empty/index.html")

        let old = Dictionary(v1.files.map { ($0.urlPath, $0.bytes) }, uniquingKeysWith: { a, _ in a })
        let changedPaths = Set(v2.files.filter { old[$0.urlPath] != $0.bytes }.map(\.path))
        let changed = changedPaths.compactMap { p in v2.files.first { $0.path == p } }
        // index.html is streamed chunked, as Meteor sends the boilerplate: count its framing.
        let optimumBytes = Int64(v2.manifest.count + MeteorMockServer.chunked(v2.indexHTML).count) + changed.reduce(0) { $0 + Int64($1.bytes.count) }
        let optimumRequests = 2 + changed.count
        var updates: [Run] = []
        var fulls: [Run] = []
        for _ in 0..<Self.runs {
            updates.append(try await Self.update(embedded: temp.path + "/embedded", versions: temp.path + "/versions", style: .webapp))
            fulls.append(try await Self.update(embedded: temp.path + "/empty", versions: temp.path + "/versions", style: .webapp))
        }
        let update = updates[0]
        let full = fulls[0]
        #expect(changed.count == 10)
        #expect(update.requests == optimumRequests && update.bytes == optimumBytes)
        func median(_ runs: [Run]) -> Double { runs.map(\.seconds).sorted()[runs.count / 2] }
        let f = { (x: Double) in String(format: "%.2f", x) }
        Self.emit(
            """
            Current-shape app (Meteor 3.1: salted hashes, `/__cordova` URLs, public files listed twice; webapp_server.js-style mock):

            | measure | update (10 of 1000 public files changed) | optimum | full download |
            |---|---|---|---|
            | requests | \(update.requests) | \(optimumRequests) | \(full.requests) |
            | bytes | \(update.bytes) | \(optimumBytes) | \(full.bytes) |
            | ratio to optimum (bytes / requests) | \(f(Double(update.bytes) / Double(optimumBytes))) / \(f(Double(update.requests) / Double(optimumRequests))) | 1.00 / 1.00 | \(f(Double(full.bytes) / Double(optimumBytes))) / \(f(Double(full.requests) / Double(optimumRequests))) |
            | wall time, median of \(Self.runs) (s) | \(String(format: "%.3f", median(updates))) | – | \(String(format: "%.3f", median(fulls))) |

            """)
    }
}

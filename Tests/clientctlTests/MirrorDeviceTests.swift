import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// `clientctl init --mirror` and `install` through a site mirror, as a user runs them: the
/// mirror is a copy of the origin's folder served by a process of its own, which a test
/// kills (SIGKILL) in the middle of an archive (docs/site-mirror.md#devices).
@Suite struct MirrorDeviceTests {
    /// A static server in its own process: serves `root`, and for the path `stall` sends
    /// the head and half the body, says so on stderr, and waits to be killed.
    static let server = """
        import http.server, os, sys, time
        root, stall = sys.argv[1], sys.argv[2]
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_GET(self):
                path = os.path.join(root, self.path.split("?")[0].lstrip("/"))
                if not os.path.isfile(path):
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = open(path, "rb").read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.path == stall:
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    sys.stderr.write("sent half\\n")
                    sys.stderr.flush()
                    time.sleep(3600)
                self.wfile.write(data)
            def log_message(self, *args):
                sys.stderr.write("GET " + self.path + "\\n")
                sys.stderr.flush()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        sys.stderr.write("listening on %d\\n" % server.server_address[1])
        sys.stderr.flush()
        server.serve_forever()
        """

    /// The mirror process, its stderr and its port.
    struct Mirror {
        let process: ChildProcess.Running
        let stderrPath: String
        let port: Int
        var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
        func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
    }

    static func startMirror(_ f: DeviceFixture, stalling stall: String = "/none") async throws -> Mirror {
        try FileManager.default.copyItem(atPath: f.tmp("releases"), toPath: f.tmp("mirror/site"))
        let script = f.tmp("mirror-server.py")
        try server.write(toFile: script, atomically: true, encoding: .utf8)
        let stderrPath = f.tmp("mirror.stderr")
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let process = try ChildProcess(
            "/usr/bin/env", ["python3", script, f.tmp("mirror"), stall], standardOutput: .discard, standardError: .file(stderrPath)
        ).start()
        var port = 0
        try await Poll.until("the mirror to listen") {
            let text = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) else { return false }
            port = Int(line.dropFirst("listening on ".count)) ?? 0
            return port > 0
        }
        return Mirror(process: process, stderrPath: stderrPath, port: port)
    }

    static func initDevice(_ f: DeviceFixture, mirrors: [String]) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(
            [
                "init", "--root", f.tmp("device2"), "--app", "com.example.notes", "--channel", "stable",
                "--manifest-url", f.server.url("/stable/manifest.json").absoluteString,
                "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
            ] + mirrors.flatMap { ["--mirror", $0] })
    }

    @Test func initTakesMirrorsAndInstallTakesTheArchiveFromTheFirst() async throws {
        #expect(Subprocess.isAvailable("python3"), "the mirror process is a python3 static server")
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        let mirror = try await Self.startMirror(f)
        defer {
            mirror.process.signalChild(SIGKILL)
            _ = mirror.process.waitBlocking()
        }
        let refused = try LoopbackHTTPServer.refusingPort()
        let mirrors = ["http://127.0.0.1:\(refused.port)/site/stable/manifest.json", mirror.url("/site/stable/manifest.json")]
        let made = try await Self.initDevice(f, mirrors: mirrors)
        #expect(made.status == 0, "\(made.errorOutput)")
        let config = try String(contentsOfFile: f.tmp("device2/config.json"), encoding: .utf8)
        #expect(config.contains("\"mirrors\""), "\(config)")
        let install = try await ClientctlBinary.run(["install", "--root", f.tmp("device2"), "--json"])
        #expect(install.status == 0, "\(install.errorOutput)")
        let report = try JSONDecoder().decode(InstallReport.self, from: install.stdout)
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(f.requests(to: "/stable/v1.0.0.tar.gz").isEmpty, "the origin served no archive byte")
        #expect(mirror.stderr.contains("GET /site/stable/v1.0.0.tar.gz"), "\(mirror.stderr)")
        #expect(install.errorOutput.contains("skipped for the rest of this check"), "the refused mirror is said: \(install.errorOutput)")
    }

    @Test func aMirrorKilledMidArchiveLeavesTheRestToTheOrigin() async throws {
        #expect(Subprocess.isAvailable("python3"), "the mirror process is a python3 static server")
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        let mirror = try await Self.startMirror(f, stalling: "/site/stable/v1.0.0.tar.gz")
        let made = try await Self.initDevice(f, mirrors: [mirror.url("/site/stable/manifest.json")])
        #expect(made.status == 0, "\(made.errorOutput)")
        let root = f.tmp("device2")
        async let installing = ClientctlBinary.run(["install", "--root", root, "--json"])
        try await Poll.until("the mirror to send half the archive") { mirror.stderr.contains("sent half") }
        mirror.process.signalChild(SIGKILL)
        let ended = await mirror.process.wait()
        #expect(ended.termination.shellStatus == 128 + SIGKILL)
        let install = try await installing
        #expect(install.status == 0, "\(install.errorOutput)")
        let report = try JSONDecoder().decode(InstallReport.self, from: install.stdout)
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        let fromOrigin = f.requests(to: "/stable/v1.0.0.tar.gz")
        #expect(fromOrigin.count == 1 && fromOrigin.first?.headers["range"]?.hasPrefix("bytes=") == true, "the rest, from the origin: \(fromOrigin)")
        let index = try String(contentsOfFile: root + "/clients/v1.0.0/index.html", encoding: .utf8)
        #expect(index.contains("<p id=\"version\">1.0.0</p>"))
    }

    /// A cohort file the mirror changed does not match the digest the manifest names: the
    /// device reads it again from the origin in the same check and takes the release; the
    /// lying mirror is asked nothing more in that check.
    @Test func aCohortFileTheMirrorChangedIsReadFromTheOrigin() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let a = try await rig.device("a", labels: ["ring=beta"])
        #expect(try await rig.install(a).version == "1.0.0")
        let id = try #require(try await rig.status(a).deviceId)
        let list = rig.dir("pilot.txt")
        try Data(["# the pilot stores", id, ""].joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: list))
        try await rig.clientctl(["cohort", "set", "stable", "pilot", "--ids", list, "--out", rig.dir("rel"), "--key", rig.key])
        try await rig.publish("1.1.0", ["--target", "ring = beta and id in cohort pilot"])
        let pilot = try #require(try rig.manifest().cohort(named: "pilot"))

        try FileManager.default.createDirectory(atPath: rig.dir("mirror"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: rig.dir("rel"), toPath: rig.dir("mirror/site"))
        let lying = URL(fileURLWithPath: rig.dir("mirror/site/stable/" + pilot.path))
        var bytes = try Data(contentsOf: lying)
        bytes[0] = bytes[0] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        try bytes.write(to: lying)
        let mirror = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(rig.dir("mirror")))
        defer { mirror.stop() }
        // The device's channel settings are keys of config.json: add the mirror there.
        let configURL = URL(fileURLWithPath: a + "/config.json")
        var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: configURL)) as? [String: Any])
        config["mirrors"] = [mirror.url("/site/stable/manifest.json").absoluteString]
        try JSONSerialization.data(withJSONObject: config, options: [.prettyPrinted, .sortedKeys]).write(to: configURL)

        rig.server.clearLog()
        #expect(try await rig.install(a).version == "1.1.0")
        #expect(mirror.requests.map(\.path).contains("/site/stable/" + pilot.path), "the mirror was asked first")
        #expect(rig.server.requests.map(\.path).contains("/stable/" + pilot.path), "then the origin")
        let afterLie = mirror.requests.drop { $0.path != "/site/stable/" + pilot.path }.dropFirst()
        #expect(afterLie.isEmpty, "nothing more from the lying mirror in that check: \(afterLie.map(\.path))")
    }

    @Test(arguments: [
        ("ftp://mirror.lan/stable/manifest.json", "https: or http:"),
        ("http://mirror.lan/stable/", "manifest.json"),
    ])
    func aMirrorURLOffTheRulesIsRefusedAndNothingIsMade(mirror: String, says: String) async throws {
        let f = try DeviceFixture()
        let made = try await Self.initDevice(f, mirrors: [mirror])
        #expect(made.status == 64, "\(made.errorOutput)")
        #expect(made.errorOutput.contains("mirrors") && made.errorOutput.contains(says), "\(made.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: f.tmp("device2/config.json")))
    }
}

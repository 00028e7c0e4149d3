import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Crash safety of `clientctl install` with real processes and real SIGKILLs: the built
/// binary kills itself at a named ``CrashPoint`` (or is killed from outside), then the root
/// must be valid, the previous version intact, no half version visible, and a plain rerun
/// must finish the install, resuming the download instead of starting it again.
@Suite struct CrashSafetyTests {
    /// Crash points and hit counts, in the order a v1.0.0 → v1.1.0 install reaches them.
    /// `atomic.*:1` is the sidecar write, `:2` the state.json write, `:3` last-check.json.
    static let points: [String] = [
        "download.chunk:1", "download.chunk:2", "download.chunk:5", "download.chunk:10", "download.chunk:18",
        "unpack.entry:1", "unpack.entry:2", "unpack.entry:4", "unpack.entry:7", "unpack.entry:10",
        "unpack.done",
        "atomic.written:1", "atomic.before-rename:1", "atomic.renamed:1",
        "promote.sidecar-written", "promote.renamed",
        "atomic.written:2", "atomic.before-rename:2", "atomic.renamed:2",
        "atomic.written:3", "atomic.before-rename:3", "atomic.renamed:3",
    ]

    @Test(arguments: points)
    func killedAtCrashPointThenRerunCompletes(_ point: String) async throws {
        let template = try CrashTemplate.shared.get()
        let device = try await CrashCase(template)
        let crashed = try await device.install(environment: ["CLIENTCTL_CRASH_AT": point])
        #expect(crashed.status == 128 + SIGKILL, "\(point): expected death by SIGKILL, got \(crashed.status): \(crashed.errorOutput)")
        try await device.expectConsistentAfterCrash(point)

        let partial = device.partialDownloadSize()
        device.server.clearLog()
        let rerun = try await device.install()
        #expect(rerun.status == 0, "\(point): rerun failed: \(rerun.errorOutput)")
        try await device.expectInstalled(point)

        let archive = device.archiveExchanges()
        if point.hasPrefix("download.") {
            let kept = try #require(partial, "\(point): no partial download was kept")
            #expect(kept > 0 && kept < template.archiveSize)
            try await device.expectResumed(from: kept, point)
        } else if point.hasPrefix("unpack.") {
            #expect(archive.isEmpty, "\(point): the complete download on disk was fetched again: \(archive)")
        }
    }

    /// Synchronous on purpose: the polling and the kill must not wait for a turn on the
    /// cooperative thread pool that other tests keep busy.
    @Test func killMinus9FromOutsideWhileTheArchiveDrips() async throws {
        let template = try CrashTemplate.shared.get()
        let device = try await CrashCase(template)
        // ~48 KiB per 20 ms: the 5 MiB archive takes ~2 s to arrive.
        device.faults.add(.drip(bytes: 48 * 1024, every: 0.02), path: CrashTemplate.archivePath)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ClientctlBinary.path)
        process.arguments = ["install", "--root", device.root]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.runUnmasked()
        // Wait until bytes are landing on disk, then a random moment more, and kill: on a
        // thread of its own, so the moment is not a busy pool's and the pool is not blocked.
        let pid = process.processIdentifier
        try await offload {
            try? Poll.untilBlocking("bytes on disk", timeout: 60) { (device.partialDownloadSize() ?? 0) > 0 }
            WorldTime.passBlocking(.milliseconds(Int.random(in: 50...900)), "a random moment for the SIGKILL")
            kill(pid, SIGKILL)
        }
        process.waitUntilExit()
        #expect(
            process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL,
            "the install ended before the kill: \(process.terminationReason.rawValue) \(process.terminationStatus)")
        try await device.expectConsistentAfterCrash("kill -9")

        let kept = try #require(device.partialDownloadSize(), "no partial download was kept")
        #expect(kept > 0 && kept < template.archiveSize)
        device.faults.clear()
        device.server.clearLog()
        let rerun = try await device.install()
        #expect(rerun.status == 0, "rerun failed: \(rerun.errorOutput)")
        try await device.expectInstalled("kill -9")
        try await device.expectResumed(from: kept, "kill -9")
    }
}

/// Built once per test process and shared by every case (read-only): a release folder
/// with v1.0.0 and v1.1.0 (~5 MiB, mostly incompressible), and a root that has v1.0.0
/// installed by the real binary.
final class CrashTemplate: Sendable {
    static let archivePath = "/stable/v1.1.0.tar.gz"
    static let shared = Result { try CrashTemplate() }

    let base: String
    let releases: String
    let root: String
    let templatePort: UInt16
    let archiveSize: Int64
    /// Content of the installed v1.0.0 (with modes), and of the v1.1.0 client.
    let v100: [String: String]
    let v110Content: [String: String]

    private init() throws {
        let tmp = NSTemporaryDirectory()
        Self.removeStaleTemplates(in: tmp)
        base = tmp + "/clientctl-crash-template-\(getpid())"
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        releases = base + "/releases"
        root = base + "/root"
        let folder = try ReleaseFolder(path: releases, key: try ReleaseFolder.testKey())
        let v1 = try ReleaseFolder.makeClient(at: base + "/src-1.0.0", version: "1.0.0")
        try folder.publish("1.0.0", archive: try ReleaseFolder.tarGz(of: v1))

        let server = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(releases))
        defer { server.stop() }
        templatePort = server.port
        let initRun = try Subprocess.run(
            ClientctlBinary.path,
            [
                "init", "--root", root, "--app", folder.app, "--channel", folder.channel,
                "--manifest-url", server.url("/stable/manifest.json").absoluteString,
                "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
            ])
        guard initRun.status == 0 else { throw TemplateError("init failed: \(initRun.errorOutput)") }
        let install = try Subprocess.run(ClientctlBinary.path, ["install", "--root", root])
        guard install.status == 0 else { throw TemplateError("install of 1.0.0 failed: \(install.errorOutput)") }
        v100 = try TreeSnapshot(root + "/clients/v1.0.0").entries

        let v2 = try Self.makeLargeClient(at: base + "/src-1.1.0")
        let archive = try ReleaseFolder.tarGz(of: v2)
        try folder.publish("1.1.0", archive: archive)
        archiveSize = Int64(archive.count)
        v110Content = try Self.content(of: v2)
    }

    /// 13 entries: the small client, five 1 MiB random files (20+ chunks of 256 KiB) and a text file.
    private static func makeLargeClient(at dir: String) throws -> String {
        let client = try ReleaseFolder.makeClient(at: dir, version: "1.1.0", extraFiles: ["assets/notes.txt": "1.1.0 notes\n"])
        var generator = SystemRandomNumberGenerator()
        for n in 1...5 {
            let bytes = (0..<(1 << 17)).map { _ in generator.next() as UInt64 }
            let data = bytes.withUnsafeBufferPointer { Data(buffer: $0) }
            try data.write(to: URL(fileURLWithPath: "\(client)/assets/blob-\(n).bin"))
        }
        return client
    }

    /// Files and folders of a tree with their sizes and hashes, modes left out (an
    /// extracted tree's modes follow the extractor's policy, not the source's).
    static func content(of dir: String) throws -> [String: String] {
        try TreeSnapshot(dir, ignoring: []).entries.mapValues { value in
            var parts = value.split(separator: " ").map(String.init)
            if parts.count > 1 { parts.remove(at: 1) }
            return parts.joined(separator: " ")
        }
    }

    /// Removes the templates of earlier test processes that are gone.
    private static func removeStaleTemplates(in tmp: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []
        for name in names where name.hasPrefix("clientctl-crash-template-") {
            guard let pid = Int32(name.dropFirst("clientctl-crash-template-".count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(atPath: tmp + "/" + name) }
        }
    }
}

struct TemplateError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One crash case: a copy of the template root served by its own loopback server.
final class CrashCase: @unchecked Sendable {
    // @unchecked: owned by one test.
    let template: CrashTemplate
    let tmp: TemporaryDirectory
    let faults = LoopbackFaults()
    let server: LoopbackHTTPServer
    var root: String { tmp("root") }
    var clients: String { root + "/clients" }

    init(_ template: CrashTemplate) async throws {
        self.template = template
        tmp = try TemporaryDirectory("crash")
        server = try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(template.releases)))
        let copy = try await Subprocess.run("cp", ["-a", template.root, tmp("root")])
        guard copy.status == 0 else { throw TemplateError("cp: \(copy.errorOutput)") }
        let configPath = root + "/config.json"
        let config = try String(contentsOfFile: configPath, encoding: .utf8)
        try config.replacingOccurrences(of: "127.0.0.1:\(template.templatePort)/", with: "127.0.0.1:\(server.port)/")
            .write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    deinit { server.stop() }

    func install(environment: [String: String] = [:]) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(["install", "--root", root], environment: environment)
    }

    /// `status --json`, parsed.
    func status(_ context: String) async throws -> [String: Any] {
        let result = try await ClientctlBinary.run(["status", "--root", root, "--json"])
        #expect(result.status == 0, "\(context): status failed: \(result.errorOutput)")
        let object = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        return try #require(object, "\(context): status --json is not a JSON object: \(result.output)")
    }

    func installedVersions(_ status: [String: Any]) -> [String] {
        ((status["installed"] as? [[String: Any]]) ?? []).compactMap { $0["version"] as? String }.sorted()
    }

    /// The size of the kept partial download, if there is one.
    func partialDownloadSize() -> Int64? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: clients)) ?? []
        guard let name = names.first(where: { $0.hasPrefix(".staging-partial-") }) else { return nil }
        let size = (try? FileManager.default.attributesOfItem(atPath: clients + "/" + name)[.size] as? NSNumber)?.int64Value
        return size
    }

    func archiveExchanges() -> [LoopbackExchange] { server.log.filter { $0.request.path == CrashTemplate.archivePath } }

    /// Right after a crash: status valid, v1.0.0 untouched, no half version listed or selectable.
    func expectConsistentAfterCrash(_ context: String) async throws {
        let status = try await status(context)
        let installed = installedVersions(status)
        #expect(installed == ["1.0.0"] || installed == ["1.0.0", "1.1.0"], "\(context): installed \(installed)")
        #expect(try TreeSnapshot(clients + "/v1.0.0").entries == template.v100, "\(context): v1.0.0 changed")
        let selected = status["selected"] as? String
        #expect(selected.map(installed.contains) == true, "\(context): selected \(selected ?? "nil") is not a listed version")
        if installed.contains("1.1.0") || FileManager.default.fileExists(atPath: clients + "/v1.1.0") {
            // Only a complete, verified tree may ever be visible under its version name.
            #expect(try CrashTemplate.content(of: clients + "/v1.1.0") == template.v110Content, "\(context): v1.1.0 is incomplete")
            #expect(installed.contains("1.1.0"), "\(context): v1.1.0 folder exists but is not listed")
        }
    }

    /// After the rerun: v1.1.0 complete, selected and pending; v1.0.0 intact; no leftovers.
    func expectInstalled(_ context: String) async throws {
        let status = try await status(context)
        #expect(installedVersions(status) == ["1.0.0", "1.1.0"], "\(context): installed \(installedVersions(status))")
        #expect(status["selected"] as? String == "1.1.0", "\(context): selected \(String(describing: status["selected"]))")
        #expect(status["pending"] as? String == "1.1.0", "\(context): pending \(String(describing: status["pending"]))")
        #expect(status["highestAccepted"] as? String == "1.1.0", "\(context): floor \(String(describing: status["highestAccepted"]))")
        #expect(try CrashTemplate.content(of: clients + "/v1.1.0") == template.v110Content, "\(context): v1.1.0 content")
        #expect(try TreeSnapshot(clients + "/v1.0.0").entries == template.v100, "\(context): v1.0.0 changed")
        let leftovers =
            try FileManager.default.contentsOfDirectory(atPath: clients).filter { $0.hasPrefix(".") || $0.contains(".tmp-") }
            + (try FileManager.default.contentsOfDirectory(atPath: root)).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(context): leftovers \(leftovers)")
    }

    /// The rerun asked only for the bytes not on disk: its first archive request is
    /// `Range: bytes=<kept>-` and the server sent exactly the rest.
    func expectResumed(from kept: Int64, _ context: String) async throws {
        // Settled: the server thread counts its last bytes after writing them, which the
        // rerun may have read (and exited) first.
        let exchanges = try await server.settledLog().filter { $0.request.path == CrashTemplate.archivePath }
        let first = try #require(exchanges.first, "\(context): the rerun did not request the archive")
        #expect(first.request[header: "range"] == "bytes=\(kept)-", "\(context): first request \(first.request)")
        #expect(first.status == 206, "\(context): \(first)")
        let sent = exchanges.reduce(Int64(0)) { $0 + $1.bodyBytesSent }
        #expect(sent == template.archiveSize - kept, "\(context): server sent \(sent) bytes, \(template.archiveSize - kept) were missing")
    }
}

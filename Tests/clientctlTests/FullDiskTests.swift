import ClientUpdater
import Foundation
import SignedArchive
import TestSupport
import Testing

/// A device root on a real 20 MiB tmpfs (issue 21, item 1): a release that cannot fit is
/// refused before its first byte, a disk that fills during a download leaves no partial
/// behind, and a full disk never stops a device serving what it has.
@Suite struct FullDiskTests {
    @Test func aReleaseThatCannotFitIsRefusedBeforeItsFirstByteWithTheNumbers() async throws {
        let (f, disk) = try await FullDisk.committedRoot()
        defer { disk.unmount() }
        try f.releases.publish("2.0.0", archive: Data(repeating: 0x5a, count: 30_000_000))
        let before = try f.snapshot()
        let state = try Data(contentsOf: URL(fileURLWithPath: f.layout.state))

        let result = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(result.status == 73, "\(result.errorOutput)")
        let line = result.errorOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!line.contains("\n"))
        let pattern = #/archive v2\.0\.0\.tar\.gz of 30\.0 MB does not fit: \d+\.\d MB free on (.+)/clients, 61\.0 MB needed/#
        let match = try #require(line.firstMatch(of: pattern), "\(line)")
        #expect(match.1 == f.layout.root)
        #expect(f.requests(to: "/stable/v2.0.0.tar.gz").isEmpty, "the archive was requested")
        #expect(try f.snapshot() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.layout.state)) == state)

        // status says why updates stop, in text and JSON.
        let json = try await ClientctlBinary.run(["status", "--root", f.layout.root, "--json"])
        let report = try JSONDecoder.iso8601.decode(StatusReport.self, from: Data(json.output.utf8))
        #expect(report.lastCheck?.result == "no-space")
        #expect(report.lastCheck?.message.contains("30.0 MB does not fit") == true)
        #expect(report.freeBytes.map { $0 > 0 && $0 < 20 << 20 } == true)
        let text = try await ClientctlBinary.run(["status", "--root", f.layout.root])
        #expect(text.output.contains("no-space: release 2.0.0: archive v2.0.0.tar.gz of 30.0 MB does not fit"), "\(text.output)")
        #expect(text.output.contains("MB free on \(f.layout.root)"), "\(text.output)")
    }

    @Test func aDiskThatFillsDuringTheDownloadDropsThePartial() async throws {
        let (f, disk) = try await FullDisk.committedRoot()
        defer { disk.unmount() }
        // 6 MB passes the check (6 + 6 + 1 MB of about 19 MB free); then, between the check
        // and the first body byte, something else fills the disk.
        let client = try ReleaseFolder.makeClient(at: f.tmp("src-2.0.0"), version: "2.0.0")
        var noise = SystemRandomNumberGenerator()
        try Data((0..<6_000_000).map { _ in UInt8.random(in: 0...255, using: &noise) })
            .write(to: URL(fileURLWithPath: client + "/noise.bin"))
        try f.releases.publish("2.0.0", archive: try ReleaseFolder.tarGz(of: client))
        let filler = disk.path + "/other-tenant"
        f.faults.add(.custom({ _ in Tmpfs.fill(filler, leaving: 1 << 20) }), path: "/stable/v2.0.0.tar.gz")
        let state = try Data(contentsOf: URL(fileURLWithPath: f.layout.state))

        let result = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(result.status == 73, "\(result.errorOutput)")
        #expect(result.errorOutput.contains("the disk filled up after"), "\(result.errorOutput)")
        #expect(result.errorOutput.contains("the partial download was removed, not kept to resume"), "\(result.errorOutput)")
        #expect(f.requests(to: "/stable/v2.0.0.tar.gz").count == 1, "a full disk is not retried")
        let left = try FileManager.default.contentsOfDirectory(atPath: f.layout.clients).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "left behind: \(left)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.layout.state)) == state)
        // Freed space: the next check downloads it.
        unlink(filler)
        f.faults.clear()
        let again = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(again.status == 0, "\(again.errorOutput)")
    }

    @Test func serveStartsAndServesTheCommittedVersionWithZeroBytesFree() async throws {
        let (f, disk) = try await FullDisk.committedRoot()
        defer { disk.unmount() }
        Tmpfs.fill(disk.path + "/filler", leaving: 0)
        #expect(DiskSpace.free(at: f.layout.root) == 0)
        let serve = try await ServeProcess(root: f.layout.root, scratch: f.tmp.path)
        let page = try await serve.get("/index.html")
        #expect(page.status == 200)
        #expect(page.body.contains("<p id=\"version\">1.0.0</p>"))
        #expect(serve.stop() == 0, "\(serve.stderr)")
    }

    @Test func startUpWithAPendingVersionAndAFullDiskKeepsServingTheCommittedOne() async throws {
        let (f, disk) = try await FullDisk.committedRoot()
        defer { disk.unmount() }
        try f.publish("1.1.0")
        #expect(try await f.updater().install().pending == "1.1.0")
        Tmpfs.fill(disk.path + "/filler", leaving: 0)
        let updater = try f.updater()
        let started = try await updater.start(bridge: nil)
        #expect(started.current == .installed("1.0.0"))
        #expect(started.pending == "1.1.0")
        #expect(started.trial == nil)
        #expect(try String(contentsOfFile: (started.servingDirectory ?? "") + "/index.html", encoding: .utf8).contains(">1.0.0<"))
        await updater.shutdown()
        // With space again, the next start runs the pending version on trial.
        try Tmpfs.removeFiller(disk.path + "/filler")
        let later = try f.updater()
        let next = try await later.start(bridge: nil)
        #expect(next.current == .installed("1.1.0"))
        #expect(next.trial == "1.1.0")
        await later.shutdown()
    }
}

/// A device root on a 20 MiB tmpfs.
enum FullDisk {
    /// A device root with 1.0.0 installed and committed, moved onto a 20 MiB tmpfs.
    static func committedRoot() async throws -> (DeviceFixture, Tmpfs) {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        _ = try await f.updater().install()
        let updater = try f.updater()
        try await updater.start(bridge: nil)
        try await updater.startupDidComplete()
        await updater.shutdown()
        let root = f.layout.root
        let seed = f.tmp("device-seed")
        try #require(rename(root, seed) == 0)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        let disk = try Tmpfs.mount(at: root, size: "20m")
        let copied = try await Subprocess.run("cp", ["-a", seed + "/.", root])
        if copied.status != 0 { disk.unmount() }
        try #require(copied.status == 0, "cp failed: \(copied.errorOutput)")
        return (f, disk)
    }
}

extension JSONDecoder {
    static var iso8601: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

import ArchivePublishing
import ClientFoundation
import ClientUpdater
import DeltaPatch
import DeviceSetup
import FleetReports
import Foundation
import ReleaseSigning
import SafeArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

@testable import SignedArchive

/// Delta updates as a device sees them: releases written by the real `Publisher` (tree tar,
/// zstd patches from older releases), hosted on a loopback server, installed by the library
/// updater. Every refusal of the patch path names its reason and ends in the full archive.
@Suite struct DeltaDeviceTests {
    /// A feed of 300-file clients where each version rewrites a few files.
    final class Feed: @unchecked Sendable {
        // @unchecked: owned by one test.
        let d: DeviceFixture
        let key: Ed25519.PrivateKey

        init() throws {
            d = try DeviceFixture()
            key = try ReleaseFolder.testKey()
        }

        var channelDir: String { d.tmp("releases") + "/stable" }

        /// Writes a client whose file `i` has the content of seed `seeds[i] ?? i`.
        func client(_ version: String, seeds: [Int: UInt64]) throws -> String {
            let dir = d.tmp("src-\(version)")
            try FileManager.default.createDirectory(atPath: dir + "/assets", withIntermediateDirectories: true)
            try Data("<!doctype html><title>\(version)</title><script src=\"assets/f0.js\"></script>\n".utf8)
                .write(to: URL(fileURLWithPath: dir + "/index.html"))
            for i in 0..<300 {
                try SyntheticCode.content(seed: seeds[i] ?? UInt64(i), count: 2_000 + i * 7)
                    .write(to: URL(fileURLWithPath: dir + "/assets/f\(i).js"))
            }
            return dir
        }

        /// Publishes on a thread of its own: level-19 patches take seconds of CPU, which on
        /// the cooperative pool would stall the in-process servers of tests running beside.
        @discardableResult
        func publish(_ version: String, seeds: [Int: UInt64] = [:], bases: Int = 3) async throws -> PublishResult {
            var request = PublishRequest(
                source: try client(version, seeds: seeds), app: "com.example.notes", channel: "stable",
                version: Version(version) ?? Version(0, 0, 0), minShellVersion: Version(1, 0, 0),
                outputDirectory: d.tmp("releases"))
            request.deltaBases = bases
            return try await onOwnThread { [self, request] in try await Publisher.publish(request, key: self.key) }
        }

        /// Installs with the library updater, returning the report and the notes it gave.
        func install() async throws -> (InstallReport, [String]) {
            let updater = try d.updater()
            let events = updater.events(bufferingPolicy: .unbounded)
            let report = try await updater.install()
            await updater.shutdown()  // ends the stream after the install's events
            var notes: [String] = []
            for await case .installNote(let note) in events { notes.append(note) }
            return (report, notes)
        }

        /// Changes the current manifest and signs it again with the release key.
        func resign(_ edit: (inout JSONObject) -> Void) throws {
            let path = channelDir + "/manifest.json"
            var object = try StrictJSON.parseObject(try Data(contentsOf: URL(fileURLWithPath: path)))
            edit(&object)
            object.removeValue(forKey: "signature")
            object.removeValue(forKey: "keyId")
            try Data(try Manifest.sign(object, by: [key]).jsonBytes()).write(to: URL(fileURLWithPath: path))
        }

        /// Paths requested since `mark` (a count of earlier requests).
        func paths(since mark: Int) async throws -> [String] { try await d.server.settledLog().dropFirst(mark).map(\.request.path) }

        func delta() throws -> ReleaseDelta {
            let data = try Data(contentsOf: URL(fileURLWithPath: channelDir + "/manifest.json"))
            let object = try StrictJSON.parseObject(data)
            let version = Version(object["version"]?.stringValue ?? "") ?? Version(0, 0, 0)
            return try #require(object["delta"].map { ReleaseDelta.parse($0, version: version) }).get()
        }

        func expectInstalledTree(_ version: String, _ sourceLocation: SourceLocation = #_sourceLocation) throws {
            let installed = try TreeSnapshot(d.layout.clientDirectory(Version(version) ?? Version(0, 0, 0)))
            #expect(installed == (try TreeSnapshot(d.tmp("src-\(version)"))), sourceLocation: sourceLocation)
        }
    }

    static let changed: [Int: UInt64] = [3: 9003, 40: 9040, 41: 9041, 150: 9150, 299: 9299]

    @Test func aDeviceHoldingAnOlderReleaseUpdatesThroughAPatch() async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        let (first, firstNotes) = try await f.install()
        #expect(first.version == "1.0.0" && firstNotes.isEmpty, "a first install is the archive, with nothing to say: \(firstNotes)")

        let published = try await f.publish("1.1.0", seeds: Self.changed)
        let delta = try f.delta()
        let patch = try #require(delta.patches.first)
        #expect(delta.patches.map(\.from) == [Version(1, 0, 0)] && patch.url == "patches/\(patch.sha256).zst")
        #expect(published.deltaCosts.map(\.patchBytes) == [patch.size])
        // Five 2–4 kB files changed out of 300: the patch is a few per cent of the archive.
        #expect(patch.size * 10 < published.manifest.size, "patch \(patch.size) B, archive \(published.manifest.size) B")

        // A report URL, so the journal keeps the device's reports.
        f.d.config = try DeviceConfig(
            app: f.d.config.app, channelKind: .signedArchive, settings: try f.d.config.settings(ArchiveSettings.self, layout: f.d.layout),
            shellVersion: f.d.config.shellVersion, deviceSettings: DeviceSettings(reportURL: "http://127.0.0.1:9/"))
        try RootInitializer.writeUnlessLocked(f.d.config, to: f.d.layout, force: true, store: f.d.layout.clients)
        let mark = try await f.d.server.settledLog().count
        let (report, notes) = try await f.install()
        #expect(report.version == "1.1.0")
        #expect(notes == ["release 1.1.0: patch from 1.0.0: \(patch.size) bytes instead of the \(published.manifest.size)-byte archive"])
        // The `downloaded` report counts the patch's bytes: what the fleet's mirror share divides.
        let downloaded = ReportJournal(layout: f.d.layout).recent().filter { $0.type == .downloaded }
        #expect(downloaded.last?.via == .patch && downloaded.last?.bytes == patch.size, "\(downloaded)")
        let paths = try await f.paths(since: mark)
        #expect(paths.contains("/stable/patches/\(patch.sha256).zst") && !paths.contains("/stable/v1.1.0.tar.gz"), "\(paths)")
        try f.expectInstalledTree("1.1.0")
        #expect(try TreeSnapshot(f.d.layout.clientDirectory(Version(1, 0, 0))) == (try TreeSnapshot(f.d.tmp("src-1.0.0"))), "the base is only read")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: f.d.layout.clients).filter { $0.hasPrefix(".staging") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// The patch applies, but what it makes is not the tree the manifest signs: the device
    /// says so and installs the archive.
    @Test func aPatchWhoseResultDoesNotHashToTheSignedTreeFallsBackToTheArchive() async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        try await f.publish("1.1.0", seeds: Self.changed)
        let signedTree = try f.delta().treeSHA256
        let claimed = String(repeating: "0", count: 64)
        try f.resign { object in
            guard case .object(var delta)? = object["delta"], case .object(var tree)? = delta["tree"] else { return }
            tree["sha256"] = .string(claimed)
            delta["tree"] = .object(tree)
            object["delta"] = .object(delta)
        }
        let mark = try await f.d.server.settledLog().count
        let (report, notes) = try await f.install()
        #expect(report.version == "1.1.0")
        #expect(
            notes == [
                "release 1.1.0: patch from 1.0.0 refused: the patched tree hashes to sha256 \(signedTree), not the signed \(claimed); using the full archive"
            ])
        #expect(try await f.paths(since: mark).contains("/stable/v1.1.0.tar.gz"))
        try f.expectInstalledTree("1.1.0")
    }

    /// No patch from a held version, and a file list that would cost more than the archive
    /// (every file changed): the archive, with a note saying why.
    @Test func aBaseTheDeviceDoesNotHoldMeansTheArchive() async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        try await f.publish("1.1.0", seeds: Self.changed)
        try await f.publish("1.2.0", seeds: Dictionary(uniqueKeysWithValues: (0..<300).map { ($0, UInt64(50_000 + $0)) }), bases: 1)
        let (report, notes) = try await f.install()
        #expect(report.version == "1.2.0")
        #expect(
            notes == [
                "release 1.2.0: no patch from a version this device holds (patches from 1.1.0; installed: 1.0.0); using the full archive"
            ])
        try f.expectInstalledTree("1.2.0")
    }

    /// An installed tree changed on disk no longer rebuilds to the signed base: the patch
    /// is not applied to it.
    @Test func aChangedInstalledTreeIsNotUsedAsABase() async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        try Data("tampered".utf8).write(to: URL(fileURLWithPath: f.d.layout.clientDirectory(Version(1, 0, 0)) + "/assets/f9.js"))
        try await f.publish("1.1.0", seeds: Self.changed)
        let base = try #require(try f.delta().patches.first?.base)
        let (report, notes) = try await f.install()
        #expect(report.version == "1.1.0")
        #expect(
            notes.count == 1 && notes[0].hasPrefix("release 1.1.0: patch from 1.0.0 refused: the installed 1.0.0 rebuilds to sha256 "), "\(notes)")
        #expect(notes.first?.hasSuffix(", not the patch's base \(base); using the full archive") == true)
        try f.expectInstalledTree("1.1.0")
    }

    /// A patch object longer than its signed size, and a signed patch whose frame claims a
    /// 4 GiB window: both refused before use, the archive installs.
    @Test func anOversizedObjectAndAHugeWindowAreRefused() async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        try await f.publish("1.1.0", seeds: Self.changed)
        let patch = try #require(try f.delta().patches.first)
        f.d.faults.add(.appendBytes(Data(repeating: 0x41, count: 4096)), path: "/stable/patches/\(patch.sha256).zst")
        let (report, notes) = try await f.install()
        #expect(report.version == "1.1.0")
        #expect(notes.count == 1 && notes[0].hasPrefix("release 1.1.0: patch from 1.0.0 refused: ") && notes[0].contains("\(patch.size)"), "\(notes)")
        try f.expectInstalledTree("1.1.0")

        // Next release: its signed patch is a frame header claiming a 4 GiB window.
        try await f.publish("1.2.0", seeds: [7: 7007])
        var frame = Data(PatchFrameHeader.magic + [0xC0, 22 << 3])
        let tree = try f.delta().treeSize
        withUnsafeBytes(of: UInt64(tree).littleEndian) { frame.append(contentsOf: $0) }
        frame.append(Data(repeating: 0, count: 64))
        let sha = Digest.hex(.sha256, of: frame)
        try frame.write(to: URL(fileURLWithPath: f.channelDir + "/patches/\(sha).zst"))
        try f.resign { object in
            guard case .object(var delta)? = object["delta"], case .array(var patches)? = delta["patches"], case .object(var first)? = patches.first
            else { return }
            first["url"] = .string("patches/\(sha).zst")
            first["sha256"] = .string(sha)
            first["size"] = .integer(Int64(frame.count))
            patches[0] = .object(first)
            delta["patches"] = .array(patches)
            object["delta"] = .object(delta)
        }
        let (next, windowNotes) = try await f.install()
        #expect(next.version == "1.2.0")
        #expect(windowNotes.count == 1 && windowNotes[0].contains("asks for a 4294967296-byte window"), "\(windowNotes)")
        try f.expectInstalledTree("1.2.0")
    }

    /// The delta is part of the signed manifest: changed without a new signature, the whole
    /// manifest is refused and the device stays as it was.
    @Test func aDeltaChangedOutsideTheSignatureIsRefusedWithTheManifest() async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        try await f.publish("1.1.0", seeds: Self.changed)
        let path = f.channelDir + "/manifest.json"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "\"patches/", with: "\"../../patches/").utf8).write(to: URL(fileURLWithPath: path))
        let before = try f.d.snapshot()
        let error = await #expect(throws: SignedManifestError.self) { try await f.install() }
        #expect(error?.code == .invalidSignature, "\(String(describing: error))")
        #expect(try f.d.snapshot().difference(from: before).allSatisfy { $0.contains("last-check") || $0.contains("state.json") })
    }

    /// A signed but malformed delta (the same base twice) is ignored with a note: the
    /// archive still installs.
    @Test func aMalformedSignedDeltaIsIgnored() async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        try await f.publish("1.1.0", seeds: Self.changed)
        try f.resign { object in
            guard case .object(var delta)? = object["delta"], case .array(let patches)? = delta["patches"] else { return }
            delta["patches"] = .array(patches + patches)
            object["delta"] = .object(delta)
        }
        let (report, notes) = try await f.install()
        #expect(report.version == "1.1.0")
        #expect(notes == ["release 1.1.0: delta field refused (field 'from' is 1.0.0 twice in 'delta.patches'); using the full archive"])
    }

    /// From the command line: `install` says on stderr that it used the patch, and
    /// `install --no-delta` fetches the archive with nothing to say.
    @Test func theCommandLinePrintsThePathAndNoDeltaTakesTheArchive() async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        let published = try await f.publish("1.1.0", seeds: Self.changed)
        let patch = try #require(try f.delta().patches.first)
        let copy = f.d.tmp("device-copy")
        try FileManager.default.copyItem(atPath: f.d.layout.root, toPath: copy)

        let mark = try await f.d.server.settledLog().count
        let plain = try await ClientctlBinary.run(["install", "--root", f.d.layout.root])
        #expect(plain.status == 0, "\(plain.errorOutput)")
        let archiveSize = published.manifest.size
        #expect(plain.errorOutput == "clientctl: release 1.1.0: patch from 1.0.0: \(patch.size) bytes instead of the \(archiveSize)-byte archive\n")
        let viaPatch = try await f.paths(since: mark)
        #expect(viaPatch.contains("/stable/patches/\(patch.sha256).zst") && !viaPatch.contains("/stable/v1.1.0.tar.gz"), "\(viaPatch)")

        let second = try await f.d.server.settledLog().count
        let full = try await ClientctlBinary.run(["install", "--root", copy, "--no-delta"])
        #expect(full.status == 0 && full.errorOutput.isEmpty, "\(full.errorOutput)")
        let viaArchive = try await f.paths(since: second)
        #expect(viaArchive.contains("/stable/v1.1.0.tar.gz") && !viaArchive.contains { $0.contains("/patches/") }, "\(viaArchive)")
        let installed = try TreeSnapshot(copy + "/clients/v1.1.0")
        #expect(installed == (try TreeSnapshot(f.d.layout.clientDirectory(Version(1, 1, 0)))))
    }

    /// Crash safety of the patch path with real SIGKILLs: the binary kills itself after
    /// rebuilding the base, after the patch arrived, and while unpacking the patched tree.
    /// After each: 1.0.0 intact, no 1.1.0 visible; a rerun finishes through the patch and
    /// never fetches a patch that was already complete on disk, nor the archive.
    @Test(arguments: ["delta.base-rebuilt", "delta.patch-downloaded", "unpack.entry:3", "unpack.entry:200"])
    func killedOnThePatchPathThenRerunCompletes(_ point: String) async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        let before = try TreeSnapshot(f.d.layout.clientDirectory(Version(1, 0, 0)))
        try await f.publish("1.1.0", seeds: Self.changed)
        let patch = try #require(try f.delta().patches.first)

        let crashed = try await ClientctlBinary.run(["install", "--root", f.d.layout.root], environment: ["CLIENTCTL_CRASH_AT": point])
        #expect(crashed.status == 128 + SIGKILL, "\(point): expected death by SIGKILL, got \(crashed.status): \(crashed.errorOutput)")
        #expect(try TreeSnapshot(f.d.layout.clientDirectory(Version(1, 0, 0))) == before, "\(point): the base changed")
        #expect(!FileManager.default.fileExists(atPath: f.d.layout.clientDirectory(Version(1, 1, 0))), "\(point): a half 1.1.0 is visible")
        let partial = DeltaInstall.partialPath(layout: f.d.layout, patch: patch)
        let patchWasComplete = DeltaInstall.isComplete(partial, patch)
        #expect(patchWasComplete == (point != "delta.base-rebuilt"), "\(point): patch on disk complete: \(patchWasComplete)")

        let mark = try await f.d.server.settledLog().count
        let rerun = try await ClientctlBinary.run(["install", "--root", f.d.layout.root])
        #expect(rerun.status == 0, "\(point): rerun failed: \(rerun.errorOutput)")
        #expect(rerun.errorOutput.hasPrefix("clientctl: release 1.1.0: patch from 1.0.0: "), "\(point): \(rerun.errorOutput)")
        let paths = try await f.paths(since: mark)
        #expect(!paths.contains("/stable/v1.1.0.tar.gz"), "\(point): the archive was fetched: \(paths)")
        #expect(paths.contains("/stable/patches/\(patch.sha256).zst") == !patchWasComplete, "\(point): \(paths)")
        try f.expectInstalledTree("1.1.0")
        #expect(try TreeSnapshot(f.d.layout.clientDirectory(Version(1, 0, 0))) == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: f.d.layout.clients).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(point): leftovers \(leftovers)")
    }
}

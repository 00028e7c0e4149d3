import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

@testable import ArchivePublishing
@testable import SignedArchive

/// `clientctl prune`: index.json keeps the newest N releases, then only what no kept
/// release names is deleted; devices on a pruned release still update.
@Suite struct PruneTests {
    typealias Feed = DeltaDeviceTests.Feed

    /// 1.0.0 installed on the device, then 1.1.0–1.3.0 published (patches from 3 bases).
    static func feed() async throws -> Feed {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        try await f.publish("1.1.0", seeds: [3: 9003, 40: 9040])
        try await f.publish("1.2.0", seeds: [3: 9103, 41: 9041])
        try await f.publish("1.3.0", seeds: [3: 9203, 42: 9042])
        return f
    }

    static func files(_ f: Feed) throws -> [String] { try ChannelPrune.existing(in: f.channelDir) }

    /// Every file a release of the index names is in the folder.
    static func expectComplete(_ f: Feed, _ sourceLocation: SourceLocation = #_sourceLocation) throws {
        let index = try ReleaseIndex.parse(try Data(contentsOf: URL(fileURLWithPath: f.channelDir + "/index.json")))
        for entry in index.releases {
            let version = ChannelPrune.versionOf(entry)
            var named = [entry["url"]?.stringValue ?? ""]
            if let value = entry["delta"], case .success(let delta) = ReleaseDelta.parse(value, version: version) {
                named += delta.patches.map { $0.url }
                if let files = delta.files {
                    named.append(files.url)
                    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: f.channelDir + "/" + files.url)))
                    named += try ReleaseFileList.parse(bytes, maxFiles: 100_000).get().files.map { files.objects + $0.sha256 }
                }
            }
            for path in named {
                #expect(
                    FileManager.default.fileExists(atPath: f.channelDir + "/" + path), "\(version) names \(path), which is gone",
                    sourceLocation: sourceLocation)
            }
        }
    }

    @Test func keepsTheNewestReleasesAndWhatTheyNeed() async throws {
        let f = try await Self.feed()
        try Data("kept".utf8).write(to: URL(fileURLWithPath: f.channelDir + "/NOTES.txt"))
        let index110 = try ReleaseIndex.parse(try Data(contentsOf: URL(fileURLWithPath: f.channelDir + "/index.json")))
        let entry110 = try #require(index110.releases.first { $0["version"]?.stringValue == "1.1.0" })
        let delta110 = try #require(entry110["delta"])
        let patchOf110 = try #require(try ReleaseDelta.parse(delta110, version: Version(1, 1, 0)).get().patches.first?.url)
        let before = try Self.files(f)
        let snapshot = try TreeSnapshot(f.channelDir)

        let dry = try await ClientctlBinary.run(["prune", "stable", "--out", f.d.tmp("releases"), "--keep", "2", "--dry-run"])
        #expect(dry.status == 0 && dry.output.hasPrefix("stable: would remove 1.1.0, 1.0.0 from index.json; would delete "), "\(dry.output)")
        #expect(try TreeSnapshot(f.channelDir) == snapshot, "a dry run changes nothing")

        let run = try await ClientctlBinary.run(["prune", "stable", "--out", f.d.tmp("releases"), "--keep", "2", "--json"])
        #expect(run.status == 0, "\(run.errorOutput)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        #expect(report["removed"] as? [String] == ["1.1.0", "1.0.0"])
        let deleted = try #require(report["deleted"] as? [String])
        // The two archives and file lists, 1.1.0's patch (from 1.0.0), and the objects only
        // they named: f3 of both, f40 of 1.1.0, index.html of both (1.0.0's f40, f41 and
        // f42 are in kept releases too).
        #expect(deleted.contains("v1.0.0.tar.gz") && deleted.contains("v1.1.0.tar.gz"), "\(deleted)")
        #expect(deleted.filter { $0.hasPrefix("files/") }.count == 2 && deleted.filter { $0.hasPrefix("objects/") }.count == 5, "\(deleted)")
        #expect(deleted.filter { $0.hasPrefix("patches/") } == [patchOf110], "patches of kept releases stay, whatever their base: \(deleted)")
        #expect(try Self.files(f) == before.filter { !deleted.contains($0) })
        let index = try ReleaseIndex.parse(try Data(contentsOf: URL(fileURLWithPath: f.channelDir + "/index.json")))
        #expect(index.releases.map { $0["version"]?.stringValue } == ["1.3.0", "1.2.0"])
        #expect(FileManager.default.fileExists(atPath: f.channelDir + "/NOTES.txt"), "files clientctl did not write stay")
        try Self.expectComplete(f)

        // Nothing more to do the second time.
        let again = try await ClientctlBinary.run(["prune", "stable", "--out", f.d.tmp("releases"), "--keep", "2"])
        #expect(again.output.hasPrefix("stable: removed no release from index.json; deleted 0 file(s), 0 bytes"), "\(again.output)")

        // The device still on the pruned 1.0.0 updates through the kept patch from 1.0.0.
        let (installed, notes) = try await f.install()
        #expect(installed.version == "1.3.0" && notes.first?.hasPrefix("release 1.3.0: patch from 1.0.0: ") == true, "\(notes)")
        try f.expectInstalledTree("1.3.0")
    }

    @Test func theOfferedReleaseIsAlwaysKept() async throws {
        let f = try await Self.feed()
        // The channel offers 1.2.0 again (an operator's rollback of manifest.json).
        let index = try ReleaseIndex.parse(try Data(contentsOf: URL(fileURLWithPath: f.channelDir + "/index.json")))
        let offered = try #require(index.releases.first { $0["version"]?.stringValue == "1.2.0" })
        try Data(JSONPrettyPrinter.render(.object(offered))).write(to: URL(fileURLWithPath: f.channelDir + "/manifest.json"))
        let run = try await ClientctlBinary.run(["prune", "stable", "--out", f.d.tmp("releases"), "--keep", "1"])
        #expect(run.status == 0, "\(run.errorOutput)")
        let kept = try ReleaseIndex.parse(try Data(contentsOf: URL(fileURLWithPath: f.channelDir + "/index.json")))
        #expect(kept.releases.map { $0["version"]?.stringValue } == ["1.3.0", "1.2.0"])
        try Self.expectComplete(f)
    }

    @Test func badArgumentsChangeNothing() async throws {
        let f = try await Self.feed()
        let snapshot = try TreeSnapshot(f.channelDir)
        let zero = try await ClientctlBinary.run(["prune", "stable", "--out", f.d.tmp("releases"), "--keep", "0"])
        #expect(zero.status == 64 && zero.errorOutput.contains("--keep must be 1 to 100000, not 0"), "\(zero.errorOutput)")
        let missing = try await ClientctlBinary.run(["prune", "beta", "--out", f.d.tmp("releases"), "--keep", "2"])
        #expect(missing.status != 0 && missing.errorOutput.contains("beta/index.json does not exist"), "\(missing.errorOutput)")
        #expect(try TreeSnapshot(f.channelDir) == snapshot)
    }
}

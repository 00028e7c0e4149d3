import ArchivePublishing
import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

@testable import SignedArchive

/// The per-file path of delta updates: a device with no patch from a version it holds
/// builds the new tree from its own installed files (hard links, each proven by hash) and
/// downloads only the rest, guided by the signed file list. Every hostile list or object
/// is refused with its reason and the archive installs.
@Suite struct DeltaFileListTests {
    typealias Feed = DeltaDeviceTests.Feed

    /// 1.0.0 installed; 1.1.0 and 1.2.0 published, 1.2.0 with a patch only from 1.1.0.
    static func behindThePatches() async throws -> Feed {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        try await f.publish("1.1.0", seeds: DeltaDeviceTests.changed)
        try await f.publish("1.2.0", seeds: [7: 7007], bases: 1)
        return f
    }

    static func inode(_ path: String) -> (dev: UInt64, ino: UInt64)? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    /// The signed file list as published, and a way to publish an edited one: the edit is
    /// written under its own hash and the manifest re-signed to pin it.
    static func list(_ f: Feed) throws -> (ReleaseDelta.Files, [JSONValue]) {
        let files = try #require(try f.delta().files)
        let object = try StrictJSON.parseObject(try Data(contentsOf: URL(fileURLWithPath: f.channelDir + "/" + files.url)), limits: .index)
        guard case .array(let entries)? = object["files"] else { throw TemplateError("no files array") }
        return (files, entries)
    }

    static func publishList(_ f: Feed, _ entries: [JSONValue]) throws {
        let bytes = CanonicalJSON.serialize(JSONObject([("format", .string(ReleaseFileList.format)), ("files", .array(entries))]))
        let sha = Digest.hex(.sha256, of: bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: f.channelDir + "/files/\(sha).json"))
        try f.resign { object in
            guard case .object(var delta)? = object["delta"], case .object(var files)? = delta["files"] else { return }
            files["url"] = .string("files/\(sha).json")
            files["sha256"] = .string(sha)
            files["size"] = .integer(Int64(bytes.count))
            files["count"] = .integer(Int64(entries.count))
            delta["files"] = .object(files)
            object["delta"] = .object(delta)
        }
    }

    static func entry(_ path: String, like template: JSONValue) -> JSONValue {
        guard case .object(var o) = template else { return template }
        o["path"] = .string(path)
        return .object(o)
    }

    @Test func aDeviceBehindThePatchesBuildsFromItsOwnFiles() async throws {
        let f = try await Self.behindThePatches()
        let (files, _) = try Self.list(f)
        let archiveSize = try #require(try FileManager.default.attributesOfItem(atPath: f.channelDir + "/v1.2.0.tar.gz")[.size] as? Int)
        let mark = try await f.d.server.settledLog().count
        let (report, notes) = try await f.install()
        #expect(report.version == "1.2.0")
        // index.html and assets/f7.js are new; the other 299 files come from 1.0.0.
        let sizes = [try Data(contentsOf: URL(fileURLWithPath: f.d.tmp("src-1.2.0") + "/index.html")).count, 2_000 + 7 * 7]
        let cost = Int(files.size) + sizes.reduce(0, +)
        #expect(
            notes == [
                "release 1.2.0: 299 of 301 files from installed versions, 2 downloaded: \(cost) bytes with the file list instead of the \(archiveSize)-byte archive"
            ])
        let paths = try await f.paths(since: mark)
        #expect(paths.filter { $0.contains("/objects/") }.count == 2 && paths.contains("/stable/\(files.url)"), "\(paths)")
        #expect(!paths.contains { $0.hasSuffix(".tar.gz") || $0.contains("/patches/") }, "\(paths)")
        try f.expectInstalledTree("1.2.0")
        // Unchanged files are the installed inodes (hard links), changed ones are new.
        let old = f.d.layout.clientDirectory(Version(1, 0, 0))
        let new = f.d.layout.clientDirectory(Version(1, 2, 0))
        #expect(Self.inode(old + "/assets/f1.js")! == Self.inode(new + "/assets/f1.js")!)
        #expect(Self.inode(old + "/assets/f7.js")! != Self.inode(new + "/assets/f7.js")!)
        #expect(try TreeSnapshot(old) == (try TreeSnapshot(f.d.tmp("src-1.0.0"))), "the installed tree is only read")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: f.d.layout.clients).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// Lists a device must refuse, each with its exact reason; the archive installs.
    @Test(arguments: [
        ("traversal", #"file list entry '../evil.js' rejected: ".." path component"#),
        ("absolute", #"file list entry '/etc/evil.js' rejected: absolute path"#),
        ("duplicate", #"file list entry 'assets/f1.js' rejected: duplicate entry"#),
        ("case", #"file list entry 'assets/F1.js' rejected: collides with "assets/f1.js" when case is ignored"#),
        ("file-as-folder", #"file list entry 'assets/f1.js/x.js' rejected: parent "assets/f1.js" is a file"#),
        ("no-index", "file list rejected: no index.html file at the root"),
    ])
    func aHostileListIsRefused(_ kind: String, _ reason: String) async throws {
        let f = try await Self.behindThePatches()
        let (_, entries) = try Self.list(f)
        let template = entries[1]
        var edited = entries
        switch kind {
        case "traversal": edited.append(Self.entry("../evil.js", like: template))
        case "absolute": edited.append(Self.entry("/etc/evil.js", like: template))
        case "duplicate", "case": edited.append(Self.entry(kind == "case" ? "assets/F1.js" : "assets/f1.js", like: template))
        case "file-as-folder": edited.append(Self.entry("assets/f1.js/x.js", like: template))
        default: edited.removeAll { if case .object(let o) = $0 { return o["path"] == .string("index.html") } else { return false } }
        }
        try Self.publishList(f, edited)
        let mark = try await f.d.server.settledLog().count
        let (report, notes) = try await f.install()
        #expect(report.version == "1.2.0")
        #expect(notes == ["release 1.2.0: file list refused: \(reason); using the full archive"])
        let paths = try await f.paths(since: mark)
        #expect(paths.contains("/stable/v1.2.0.tar.gz") && !paths.contains { $0.contains("/objects/") }, "\(paths)")
        try f.expectInstalledTree("1.2.0")
    }

    /// A list whose bytes are not the ones the manifest pins (changed on the server after
    /// signing) is never parsed.
    @Test func aListNotCoveredByTheSignatureIsRefused() async throws {
        let f = try await Self.behindThePatches()
        let (files, entries) = try Self.list(f)
        let bytes = CanonicalJSON.serialize(
            JSONObject([("format", .string(ReleaseFileList.format)), ("files", .array(entries + [Self.entry("../evil.js", like: entries[1])]))]))
        try Data(bytes).write(to: URL(fileURLWithPath: f.channelDir + "/" + files.url))
        let (report, notes) = try await f.install()
        #expect(report.version == "1.2.0")
        #expect(
            notes.count == 1 && notes[0].hasPrefix("release 1.2.0: file list refused: ") && notes[0].hasSuffix("; using the full archive"), "\(notes)"
        )
        #expect(notes.first?.contains("\(files.size)") == true, "the size the manifest signs is named: \(notes)")
        try f.expectInstalledTree("1.2.0")
    }

    /// An object larger than its listed size, or with other bytes of the same size: the
    /// download refuses it, nothing is linked, the archive installs.
    @Test(arguments: ["larger", "other-bytes"])
    func aBadObjectIsRefused(_ kind: String) async throws {
        let f = try await Self.behindThePatches()
        let (_, entries) = try Self.list(f)
        let f7 = try #require(entries.first { if case .object(let o) = $0 { return o["path"] == .string("assets/f7.js") } else { return false } })
        guard case .object(let o) = f7, case .string(let sha)? = o["sha256"] else { throw TemplateError("no sha256") }
        let object = f.channelDir + "/objects/" + sha
        var bytes = try Data(contentsOf: URL(fileURLWithPath: object))
        if kind == "larger" { bytes.append(contentsOf: Array(repeating: 0x20, count: 4096)) } else { bytes[0] ^= 0x01 }
        try bytes.write(to: URL(fileURLWithPath: object))
        let (report, notes) = try await f.install()
        #expect(report.version == "1.2.0")
        #expect(notes.count == 1 && notes[0].hasPrefix("release 1.2.0: file list path refused: ") && notes[0].contains(sha), "\(notes)")
        try f.expectInstalledTree("1.2.0")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: f.d.layout.clients).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// An installed file changed on disk hashes differently: it is not linked; the
    /// original is downloaded instead.
    @Test func aChangedInstalledFileIsDownloadedNotLinked() async throws {
        let f = try await Self.behindThePatches()
        let tampered = f.d.layout.clientDirectory(Version(1, 0, 0)) + "/assets/f9.js"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: tampered))
        bytes[0] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: tampered))
        let (report, notes) = try await f.install()
        #expect(report.version == "1.2.0")
        #expect(notes.first?.contains("298 of 301 files from installed versions, 3 downloaded") == true, "\(notes)")
        try f.expectInstalledTree("1.2.0")
    }

    /// SIGKILL after the objects arrived and midway through linking: the rerun builds the
    /// tree without fetching the list or any object again.
    @Test(arguments: ["files.objects-downloaded", "files.linked:100"])
    func killedOnTheFileListPathThenRerunCompletes(_ point: String) async throws {
        let f = try await Self.behindThePatches()
        let crashed = try await ClientctlBinary.run(["install", "--root", f.d.layout.root], environment: ["CLIENTCTL_CRASH_AT": point])
        #expect(crashed.status == 128 + SIGKILL, "\(point): \(crashed.status) \(crashed.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: f.d.layout.clientDirectory(Version(1, 2, 0))))
        #expect(try TreeSnapshot(f.d.layout.clientDirectory(Version(1, 0, 0))) == (try TreeSnapshot(f.d.tmp("src-1.0.0"))))
        let mark = try await f.d.server.settledLog().count
        let rerun = try await ClientctlBinary.run(["install", "--root", f.d.layout.root])
        #expect(rerun.status == 0 && rerun.errorOutput.contains("299 of 301 files from installed versions"), "\(point): \(rerun.errorOutput)")
        let paths = try await f.paths(since: mark)
        #expect(!paths.contains { $0.contains("/objects/") || $0.contains("/files/") || $0.hasSuffix(".tar.gz") }, "\(point): \(paths)")
        try f.expectInstalledTree("1.2.0")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: f.d.layout.clients).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(point): \(leftovers)")
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import SafeArchive
import SignedArchive
import SignedManifest
import TestSupport
import Testing

/// Happy paths with archives made by the real `bsdtar` and GNU `tar`, and the behaviour
/// around them: modes, the descriptor, the staging folder, nothing written elsewhere.
@Suite struct SafeExtractorTests {
    /// A client folder with nested folders, an empty file and folder, a non-ASCII name,
    /// a setuid file and 1.2 MB of incompressible bytes (several read buffers).
    static func makeClient(in dir: String) throws -> [String: Data] {
        var files: [String: Data] = [
            "index.html": Data("<html><script src=app.js></script></html>".utf8),
            "app.js": Data(String(repeating: "console.log('hi');\n", count: 2000).utf8),
            "assets/img/logo.svg": Data("<svg/>".utf8),
            "assets/empty.txt": Data(),
            "caf\u{E9} \u{1F600}.txt": Data("unicode".utf8),
            "bin/run.sh": Data("#!/bin/sh\n".utf8),
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let words = (0..<150_000).map { _ -> UInt64 in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        files["assets/blob.bin"] = words.withUnsafeBytes { Data($0) }
        for (path, data) in files {
            let full = dir + "/" + path
            try FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: full))
        }
        try FileManager.default.createDirectory(atPath: dir + "/empty-dir", withIntermediateDirectories: true)
        chmod(dir + "/bin/run.sh", 0o4755)
        chmod(dir + "/assets", 0o777)
        return files
    }

    /// Builds an archive with a real tool and checks the extracted tree, its modes and
    /// that nothing but the staging folder appeared in the sandbox.
    func roundTrip(_ tool: String, _ arguments: (String, String) -> [String], format: ArchiveFormat) throws {
        let sandbox = try ExtractionSandbox()
        let source = try TemporaryDirectory("unpack-src")
        let files = try Self.makeClient(in: source.path)
        let made = try Subprocess.run(tool, arguments(sandbox.archive, source.path))
        try #require(made.status == 0, "\(made.errorOutput)")
        let before = sandbox.snapshot()

        let report = try sandbox.extractFile(sandbox.archive)

        #expect(report.format == format)
        #expect(report.files == files.count)
        #expect(report.directories == 4)  // assets, assets/img, bin, empty-dir ("./" is the staging root)
        #expect(report.bytesWritten == UInt64(files.values.reduce(0) { $0 + $1.count }))
        for (path, data) in files {
            #expect(FileManager.default.contents(atPath: sandbox.staging + "/" + path) == data, "\(path)")
            var info = stat()
            #expect(lstat(sandbox.staging + "/" + path, &info) == 0)
            #expect(info.st_mode & 0o7777 == 0o644, "\(path) mode \(String(info.st_mode & 0o7777, radix: 8))")
        }
        for dir in ["", "/assets", "/assets/img", "/bin", "/empty-dir"] {
            var info = stat()
            #expect(lstat(sandbox.staging + dir, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR)
            #expect(info.st_mode & 0o7777 == 0o755, "\(dir)")
        }
        let after = sandbox.snapshot()
        let added = Set(after.keys).subtracting(before.keys)
        #expect(added.allSatisfy { $0.hasPrefix("clients/.staging-test") })
        #expect(after.filter { !$0.key.hasPrefix("clients/.staging-test") } == before)
    }

    @Test func tarGzipMadeByBsdtar() throws {
        try roundTrip("bsdtar", { ["-czf", $0, "-C", $1, "."] }, format: .tarGzip)
    }

    @Test func tarZstdMadeByBsdtar() throws {
        try roundTrip("bsdtar", { ["--zstd", "-cf", $0, "-C", $1, "."] }, format: .tarZstd)
    }

    @Test func zipMadeByBsdtar() throws {
        try roundTrip("bsdtar", { ["--format", "zip", "-cf", $0, "-C", $1, "."] }, format: .zip)
    }

    @Test func tarGzipMadeByGNUTar() throws {
        try roundTrip("tar", { ["--format=gnu", "-czf", $0, "-C", $1, "."] }, format: .tarGzip)
    }

    @Test func paxTarGzipMadeByGNUTarWithoutDotPrefix() throws {
        try roundTrip("sh", { ["-c", "cd '\($1)' && tar --format=pax -czf '\($0)' *"] }, format: .tarGzip)
    }

    @Test func descriptorOffsetIsNotUsed() throws {
        let sandbox = try ExtractionSandbox()
        try Data(Build.tarGz([Build.index])).write(to: URL(fileURLWithPath: sandbox.archive))
        let fd = open(sandbox.archive, O_RDONLY)
        defer { close(fd) }
        lseek(fd, 0, SEEK_END)
        let report = try SafeExtractor().extract(fileDescriptor: fd, into: sandbox.staging)
        #expect(report.files == 1)
        #expect(lseek(fd, 0, SEEK_CUR) == off_t(report.archiveBytes))
    }

    @Test func archiveFileReplacedAfterOpeningIsNotRead() throws {
        // The verified descriptor is what counts: swapping the path afterwards changes nothing.
        let sandbox = try ExtractionSandbox()
        try Data(Build.tarGz([Build.index])).write(to: URL(fileURLWithPath: sandbox.archive))
        let fd = open(sandbox.archive, O_RDONLY)
        defer { close(fd) }
        try FileManager.default.removeItem(atPath: sandbox.archive)
        try Data(Build.tarGz([Build.index, .file("../evil.txt", "x")])).write(to: URL(fileURLWithPath: sandbox.archive))
        let report = try SafeExtractor().extract(fileDescriptor: fd, into: sandbox.staging)
        #expect(report.files == 1)
    }

    @Test func existingStagingFolderIsRefusedAndLeftAlone() throws {
        let sandbox = try ExtractionSandbox()
        try FileManager.default.createDirectory(atPath: sandbox.staging, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: sandbox.staging + "/partial"))
        try Data(Build.tarGz([Build.index])).write(to: URL(fileURLWithPath: sandbox.archive))
        let before = sandbox.snapshot()
        let error = #expect(throws: SafeArchiveError.self) { try sandbox.extractFile(sandbox.archive) }
        #expect(error?.message == "cannot unpack archive: staging folder \(sandbox.staging) exists already")
        #expect(error?.code == .alreadyExists)
        #expect(error?.kind == .cannotCreate)
        #expect(sandbox.snapshot() == before)
    }

    @Test func setuidAndWorldWritableModesAreIgnored() throws {
        let sandbox = try ExtractionSandbox()
        let entries: [HostileArchive.TarEntry] = [
            .file("index.html", "x", mode: 0o6777), .file("s", "x", mode: 0o4755),
            HostileArchive.TarEntry(name: Array("d/".utf8), type: UInt8(ascii: "5"), mode: 0o7777),
        ]
        _ = try sandbox.extract(Build.tarGz(entries))
        for (path, mode) in [("index.html", 0o644), ("s", 0o644), ("d", 0o755)] {
            var info = stat()
            #expect(stat(sandbox.staging + "/" + path, &info) == 0)
            #expect(Int(info.st_mode & 0o7777) == mode, "\(path)")
        }
    }

    @Test func dotSlashRootEntryAndLeadingDotSlashAreAccepted() throws {
        let sandbox = try ExtractionSandbox()
        let report = try sandbox.extract(
            Build.tarGz([
                .directory("./"), .file("./index.html", "x"), .directory("./a/"),
                .file("./a/b.txt", "y"),
            ]))
        #expect(report.files == 2 && report.directories == 1)
        #expect(FileManager.default.fileExists(atPath: sandbox.staging + "/a/b.txt"))
    }

    @Test func missingParentFoldersAreCreated() throws {
        let sandbox = try ExtractionSandbox()
        let report = try sandbox.extract(Build.tarGz([Build.index, .file("x/y/z.txt", "z"), .directory("x/")]))
        #expect(report.directories == 2)
        #expect(try String(contentsOfFile: sandbox.staging + "/x/y/z.txt", encoding: .utf8) == "z")
    }

    @Test func entryRuleVerdicts() {
        let rule = EntryRule()
        #expect(rule.check(Array("./a/b".utf8), isDirectory: false) == .accepted(["a", "b"]))
        #expect(rule.check(Array("a/b/".utf8), isDirectory: true) == .accepted(["a", "b"]))
        #expect(rule.check(Array("a/b/".utf8), isDirectory: false) == .rejected("empty path component"))
        #expect(rule.check(Array("a//b".utf8), isDirectory: false) == .rejected("empty path component"))
        #expect(rule.check(Array("a/./b".utf8), isDirectory: false) == .rejected("\".\" path component"))
        #expect(rule.check(Array("./".utf8), isDirectory: true) == .accepted([]))
        #expect(rule.check(Array("./".utf8), isDirectory: false) == .rejected("empty path component"))
        #expect(rule.check(Array("a\u{85}b".utf8), isDirectory: false) == .rejected("control character in name"))
        #expect(rule.check([], isDirectory: false) == .rejected("empty name"))
    }

    @Test func manyFoldersBeyondTheOpenFolderCache() throws {
        let sandbox = try ExtractionSandbox()
        var entries = [Build.index]
        for i in 0..<150 { entries.append(.file("d\(i % 75)/e\(i)/f.txt", "\(i)")) }
        let report = try sandbox.extract(Build.tarGz(entries))
        #expect(report.files == 151)
        #expect(report.directories == 225)
        #expect(try String(contentsOfFile: sandbox.staging + "/d74/e149/f.txt", encoding: .utf8) == "149")
    }

    @Test
    func fullDiskRemovesStagingAndNamesTheEntry() throws {
        let sandbox = try ExtractionSandbox()
        let disk = sandbox.tmp("clients/disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mounted = try Subprocess.run("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", disk])
        try #require(mounted.status == 0, "mount tmpfs failed: \(mounted.errorOutput)")
        defer { _ = try? Subprocess.run("umount", [disk]) }
        let big = String(repeating: "0123456789abcdef", count: 40_000)
        try Data(Build.tarGz([Build.index, .file("big.txt", big)])).write(to: URL(fileURLWithPath: sandbox.archive))
        let fd = open(sandbox.archive, O_RDONLY)
        defer { close(fd) }
        let error = #expect(throws: SafeArchiveError.self) {
            try SafeExtractor().extract(fileDescriptor: fd, into: disk + "/.staging-x")
        }
        #expect(error?.message == #"cannot unpack archive entry "big.txt": cannot write file: No space left on device"#)
        #expect(error?.code == .io)
        #expect(error?.kind == .cannotCreate)
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk) == [])
    }
}

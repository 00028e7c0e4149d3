import ArchivePublishing
import ClientFoundation
import Foundation
import SafeArchive
import SignedManifest
import TestSupport
import Testing

@Suite struct ArchiveWriterTests {
    /// (format, extraction tool, arguments before the archive path)
    static let extractors: [(ArchiveFormat, String, [String])] = [
        (.tarGzip, "bsdtar", ["-xf"]), (.tarGzip, "tar", ["-xzf"]),
        (.tarZstd, "bsdtar", ["-xf"]), (.tarZstd, "tar", ["--zstd", "-xf"]),
        (.zip, "bsdtar", ["-xf"]), (.zip, "unzip", ["-q"]),
    ]

    @Test(arguments: 0..<extractors.count)
    func extractsToATreeIdenticalToTheSource(_ k: Int) throws {
        let (format, tool, args) = Self.extractors[k]
        let dir = try TemporaryDirectory("archive")
        try SourceFolders.rich(at: dir("src"))
        let archive = dir("release.\(format.fileExtension)")
        try ArchiveWriter.write(try SourceTree.scan(dir("src")), format: format, to: archive)
        try FileManager.default.createDirectory(atPath: dir("out"), withIntermediateDirectories: true)
        let r = try Subprocess.run(tool, args + [archive], environment: ["LC_ALL": "C.UTF-8"], directory: dir("out"))
        #expect(r.status == 0, "\(tool): \(r.errorOutput)")
        let source = try TreeSnapshot(dir("src")).normalisedModes()
        let extracted = try TreeSnapshot(dir("out"))
        #expect(extracted.entries.count == source.entries.count, "\(extracted) vs \(source)")
        #expect(extracted == source, "\(extracted.difference(from: source))")
        #expect(extracted.entries["assets/crème-brûlée-🍮.txt"] != nil)
        let script = Data("#!/bin/sh\necho hi\n".utf8)
        #expect(extracted.entries["tool.sh"] == "file 755 \(script.count) \(Digest.hex(.sha256, of: script))")
    }

    @Test(arguments: ArchiveFormat.allCases)
    func sameTreeGivesTheSameBytes(format: ArchiveFormat) throws {
        let dir = try TemporaryDirectory("archive")
        try SourceFolders.rich(at: dir("src"))
        try ArchiveWriter.write(try SourceTree.scan(dir("src")), format: format, to: dir("one"))
        // Different mtimes, modes with extra bits, another copy of the folder: same bytes.
        try FileManager.default.copyItem(atPath: dir("src"), toPath: dir("copy"))
        var times = [timespec(tv_sec: 1_234_567, tv_nsec: 0), timespec(tv_sec: 1_234_567, tv_nsec: 0)]
        utimensat(AT_FDCWD, dir("copy") + "/index.html", &times, 0)
        chmod(dir("copy") + "/style.css", 0o600)
        try ArchiveWriter.write(try SourceTree.scan(dir("copy")), format: format, to: dir("two"))
        let one = try Data(contentsOf: URL(fileURLWithPath: dir("one")))
        let two = try Data(contentsOf: URL(fileURLWithPath: dir("two")))
        #expect(one == two)
        if format == .tarGzip {
            #expect(Array(one.prefix(10)) == [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03], "gzip header without name or time")
        }
    }

    @Test func entriesAreSortedOwnedByRootWithFixedTimes() throws {
        let dir = try TemporaryDirectory("archive")
        try SourceFolders.rich(at: dir("src"))
        let tree = try SourceTree.scan(dir("src"))
        try ArchiveWriter.write(tree, format: .tarGzip, to: dir("a.tar.gz"))
        let listing = try Subprocess.run(
            "tar", ["--numeric-owner", "--full-time", "-tvzf", dir("a.tar.gz")],
            environment: ["TZ": "UTC", "LC_ALL": "C.UTF-8"])
        let lines = listing.output.split(separator: "\n")
        #expect(lines.count == tree.entries.count)
        for line in lines {
            #expect(line.contains(" 0/0 "), "\(line)")
            #expect(line.contains("2000-01-01 00:00:00"), "\(line)")
        }
        let names = try Subprocess.run("tar", ["-tzf", dir("a.tar.gz")], environment: ["LC_ALL": "C.UTF-8"]).output.split(separator: "\n").map(
            String.init)
        #expect(names == tree.entries.map(\.archiveName))
        #expect(names == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        // A folder comes before what it contains.
        #expect((names.firstIndex(of: "assets/") ?? 99) < (names.firstIndex(of: "assets/fonts/fonts.css") ?? 0))
    }

    @Test func refusesToOverwrite() throws {
        let dir = try TemporaryDirectory("archive")
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir("a.tar.gz")))
        let e = #expect(throws: SafeArchiveError.self) {
            try ArchiveWriter.write(try SourceTree.scan(TestPaths.sampleClient), format: .tarGzip, to: dir("a.tar.gz"))
        }
        #expect(e?.code == .alreadyExists)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir("a.tar.gz"))) == Data("x".utf8))
    }
}

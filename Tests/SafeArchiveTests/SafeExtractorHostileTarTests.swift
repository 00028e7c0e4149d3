import ClientUpdater
import Foundation
import SafeArchive
import TestSupport
import Testing

/// One test per hostile tar case: the exact error, the sandbox unchanged, no staging left.
@Suite struct SafeExtractorHostileTarTests {
    typealias Entry = HostileArchive.TarEntry

    @Test func dotDotTraversal() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file("../evil.txt", "x")]),
            #"archive entry "../evil.txt" rejected: ".." path component"#)
    }

    @Test func dotDotInsideThePath() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file("assets/../../evil.txt", "x")]),
            #"archive entry "assets/../../evil.txt" rejected: ".." path component"#)
    }

    @Test func absolutePath() throws {
        let target = "/tmp/clientctl-absolute-\(UUID().uuidString).txt"
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file(target, "x")]),
            "archive entry \"\(target)\" rejected: absolute path")
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func symlinkInside() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .symlink("link.html", to: "index.html")]),
            #"archive entry "link.html" rejected: symbolic link"#)
    }

    @Test func symlinkEscapingThenWrittenThrough() throws {
        let sandbox = try ExtractionSandbox()
        let entries: [Entry] = [.symlink("escape", to: sandbox.tmp.path), .file("escape/outside.txt", "pwned"), Build.index]
        try sandbox.expectRejected(Build.tarGz(entries), #"archive entry "escape" rejected: symbolic link"#)
        #expect(try String(contentsOfFile: sandbox.tmp("outside.txt"), encoding: .utf8) == "outside")
    }

    @Test func symlinkAsIndex() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([.symlink("index.html", to: "/etc/passwd")]),
            #"archive entry "index.html" rejected: symbolic link"#)
    }

    @Test func hardlinkWithoutData() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .hardlink("copy.html", to: "index.html")]),
            #"archive entry "copy.html" rejected: hard link"#)
    }

    @Test func hardlinkCarryingDataToAFileOutside() throws {
        let sandbox = try ExtractionSandbox()
        let entries: [Entry] = [Build.index, .hardlink("h", to: "../../outside.txt", data: "overwritten")]
        try sandbox.expectRejected(Build.tarGz(entries), #"archive entry "h" rejected: hard link"#)
        #expect(try String(contentsOfFile: sandbox.tmp("outside.txt"), encoding: .utf8) == "outside")
    }

    @Test func deviceNode() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .characterDevice("null")]),
            #"archive entry "null" rejected: character device"#)
    }

    @Test func fifo() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .fifo("pipe")]),
            #"archive entry "pipe" rejected: fifo"#)
    }

    @Test func realGzipBombWithDefaultLimits() throws {
        // 256 MiB of zeros compressed by the real gzip (~1000:1): refused long before the end.
        let sandbox = try ExtractionSandbox()
        let head =
            HostileArchive.tar([Build.index], endMarker: false)
            + HostileArchive.header(name: Array("bomb.bin".utf8), type: UInt8(ascii: "0"), size: 256 << 20, mode: 0o644, link: [])
        try Data(head).write(to: URL(fileURLWithPath: sandbox.tmp("head.bin")))
        let made = try Subprocess.run(
            "sh", ["-c", "{ cat head.bin; head -c \((256 << 20) + 1024) /dev/zero; } | gzip -1 > archive.bin"],
            directory: sandbox.tmp.path)
        #expect(made.status == 0)
        sandbox.expectArchiveRejected(#"archive entry "bomb.bin" rejected: compression ratio above 200:1"#)
    }

    @Test func gzipBombBeyondTheRatioCap() throws {
        // This encoder's fixed Huffman codes top out near 160:1, so the cap is set to 100:1.
        let limits = ExtractionLimits(maxCompressionRatio: 100, ratioGraceBytes: 1 << 20)
        let bomb = HostileArchive.header(
            name: Array("bomb.bin".utf8), type: UInt8(ascii: "0"), size: 16 << 20,
            mode: 0o644, link: [])
        let bytes = HostileArchive.gzip([
            .bytes(HostileArchive.tar([Build.index], endMarker: false) + bomb),
            .zeros((16 << 20) + 1024),
        ])
        #expect(bytes.count < 110_000)
        try ExtractionSandbox().expectRejected(
            bytes, #"archive entry "bomb.bin" rejected: compression ratio above 100:1"#,
            limits: limits)
    }

    @Test func fileDataBeyondTheTotalCap() throws {
        let limits = ExtractionLimits(maxTotalBytes: 1000)
        let entries: [Entry] = [
            Build.index, .file("a.bin", String(repeating: "a", count: 600)),
            .file("b.bin", String(repeating: "b", count: 600)),
        ]
        try ExtractionSandbox().expectRejected(
            Build.tarGz(entries),
            #"archive entry "b.bin" rejected: file data beyond the cap of 1000 bytes in total"#,
            limits: limits)
    }

    @Test func tooManyEntries() throws {
        let entries = [Build.index] + (1...5).map { Entry.file("f\($0).txt", "x") }
        try ExtractionSandbox().expectRejected(
            Build.tarGz(entries), #"archive entry "f5.txt" rejected: more than 5 entries"#,
            limits: ExtractionLimits(maxEntries: 5))
    }

    @Test func truncatedGzipStream() throws {
        let bytes = Build.tarGz([Build.index, .file("app.js", String(repeating: "x", count: 5000))])
        try ExtractionSandbox().expectRejected(Array(bytes.prefix(bytes.count / 2)), "archive rejected: truncated gzip input")
    }

    @Test func truncatedTarInsideValidGzip() throws {
        let tar = HostileArchive.tar([Build.index, .file("app.js", String(repeating: "x", count: 5000))])
        try ExtractionSandbox().expectRejected(
            HostileArchive.gzip(Array(tar.prefix(2048))),
            #"archive entry "app.js" rejected: Truncated tar archive"#)
    }

    @Test func tarWithoutEndMarker() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index], endMarker: false),
            "archive rejected: truncated tar archive: no end-of-archive marker")
    }

    @Test func corruptGzipTrailerCRC() throws {
        let tar = HostileArchive.tar([Build.index])
        var bytes = HostileArchive.gzip(tar)
        bytes[bytes.count - 8] ^= 0xFF
        let good = HostileArchive.crc32(tar)
        let message = String(format: "archive rejected: gzip CRC-32 mismatch: trailer says %08x, data has %08x", good ^ 0xFF, good)
        try ExtractionSandbox().expectRejected(bytes, message)
    }

    @Test func corruptGzipLength() throws {
        let tar = HostileArchive.tar([Build.index])
        var bytes = HostileArchive.gzip(tar)
        bytes[bytes.count - 4] ^= 0x01
        try ExtractionSandbox().expectRejected(bytes, "archive rejected: gzip length mismatch: trailer says \(tar.count ^ 1), data has \(tar.count)")
    }

    @Test func alteredStoredBlock() throws {
        let tar = HostileArchive.tar([.file("index.html", "<html>ok</html>")])
        var bytes = HostileArchive.gzip(tar, stored: true)
        let at = 10 + 5 + 512  // gzip header, stored block header, tar header: the first data byte
        #expect(bytes[at] == UInt8(ascii: "<"))
        bytes[at] = UInt8(ascii: "!")
        var altered = tar
        altered[512] = UInt8(ascii: "!")
        let message = String(
            format: "archive rejected: gzip CRC-32 mismatch: trailer says %08x, data has %08x",
            HostileArchive.crc32(tar), HostileArchive.crc32(altered))
        try ExtractionSandbox().expectRejected(bytes, message)
    }

    @Test func bytesAfterTheGzipMember() throws {
        let tar = HostileArchive.tar([Build.index])
        let bytes = HostileArchive.gzip(tar) + Array("garbage!".utf8)
        let message = String(
            format: "archive rejected: gzip CRC-32 mismatch: trailer says %08x, data has %08x",
            0x62_72_61_67 as UInt32, HostileArchive.crc32(tar))
        try ExtractionSandbox().expectRejected(bytes, message)
    }

    @Test func missingIndex() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([.file("app.js", "x"), .file("sub/index.html", "x")]),
            "archive rejected: no index.html file at the archive root")
    }

    @Test func indexIsADirectory() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([.directory("index.html/"), .file("index.html/a", "x")]),
            "archive rejected: no index.html file at the archive root")
    }

    @Test func emptyTar() throws {
        try ExtractionSandbox().expectRejected(Build.tarGz([]), "archive rejected: archive has no entries")
    }

    @Test func emptyFile() throws {
        try ExtractionSandbox().expectRejected([], "archive rejected: archive file is empty")
    }

    @Test func duplicateEntry() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file("./index.html", "evil")]),
            #"archive entry "./index.html" rejected: duplicate entry"#)
    }

    /// Names a case-insensitive file system (APFS, NTFS) stores as one: the second would
    /// overwrite the first there.
    @Test func namesThatDifferOnlyInCase() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file("assets/App.js", "a"), .file("assets/app.js", "b")]),
            #"archive entry "assets/app.js" rejected: collides with "assets/App.js" when case is ignored"#)
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file("Assets/a.js", "a"), .file("assets/b.js", "b")]),
            #"archive entry "assets/b.js" rejected: collides with "Assets" when case is ignored"#)
    }

    /// `é` precomposed (U+00E9) and decomposed (e + U+0301): one name on a normalizing file
    /// system.
    @Test func canonicallyEquivalentNames() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file("caf\u{E9}.js", "a"), .file("cafe\u{301}.js", "b")]),
            "archive entry \"cafe\u{301}.js\" rejected: duplicate entry")
    }

    @Test func fileThenDirectoryOfTheSameName() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file("a", "x"), .file("a/b", "y")]),
            #"archive entry "a/b" rejected: parent "a" is a file"#)
    }

    @Test func directoryThenFileOfTheSameName() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .directory("d/"), .file("d", "x")]),
            #"archive entry "d" rejected: a directory with this name exists"#)
    }

    @Test func nulInTheNameField() throws {
        let name = Array("index.html".utf8) + [0] + Array("../evil".utf8)
        try ExtractionSandbox().expectRejected(
            Build.tarGz([.file(raw: name, "x")]),
            #"archive entry "index.html\u{0}../evil" rejected: NUL byte in name"#)
    }

    @Test func nulInAPaxPath() throws {
        let entry = Entry(
            name: Array("index.html".utf8) + [0] + Array("x".utf8), type: UInt8(ascii: "0"),
            data: Array("x".utf8), nameStyle: .pax(fieldName: Array("innocent".utf8)))
        try ExtractionSandbox().expectRejected(
            Build.tarGz([entry]),
            #"archive entry "index.html\u{0}x" rejected: NUL byte in name"#)
    }

    @Test func controlCharacter() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file("bad\u{1B}[31m.txt", "x")]),
            #"archive entry "bad\u{1b}[31m.txt" rejected: control character in name"#)
    }

    @Test func notUTF8() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file(raw: [0x61, 0xFF, 0x62], "x")]),
            #"archive entry "a\xffb" rejected: name is not valid UTF-8"#)
    }

    @Test func backslash() throws {
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file("..\\evil.txt", "x")]),
            #"archive entry "..\\evil.txt" rejected: backslash in name"#)
    }

    @Test func overlongComponent() throws {
        let name = String(repeating: "a", count: 256)
        let entry = Entry(name: Array(name.utf8), type: UInt8(ascii: "0"), nameStyle: .pax(fieldName: Array("short".utf8)))
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, entry]),
            "archive entry \"\(name)\" rejected: path component longer than 255 bytes")
    }

    @Test func overlongPath() throws {
        let name = Array(repeating: String(repeating: "d", count: 200), count: 6).joined(separator: "/")
        let entry = Entry(name: Array(name.utf8), type: UInt8(ascii: "0"), nameStyle: .gnuLongName)
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, entry]),
            "archive entry \"\(name)\" rejected: path longer than 1024 bytes")
    }

    @Test func deepNesting() throws {
        let name = String(repeating: "d/", count: 32) + "f.txt"
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, .file(name, "x")]),
            "archive entry \"\(name)\" rejected: path deeper than 32 levels")
    }

    @Test func paxPathOverrideToDotDot() throws {
        let entry = Entry(
            name: Array("../evil.txt".utf8), type: UInt8(ascii: "0"), data: Array("x".utf8),
            nameStyle: .pax(fieldName: Array("innocent.txt".utf8)))
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, entry]),
            #"archive entry "../evil.txt" rejected: ".." path component"#)
    }

    @Test func gnuLongNameToDotDot() throws {
        let name = "../" + String(repeating: "x", count: 120)
        let entry = Entry(name: Array(name.utf8), type: UInt8(ascii: "0"), data: Array("x".utf8), nameStyle: .gnuLongName)
        try ExtractionSandbox().expectRejected(
            Build.tarGz([Build.index, entry]),
            "archive entry \"\(name)\" rejected: \"..\" path component")
    }

    @Test func nestedGzip() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.gzip(Build.tarGz([Build.index])),
            "archive rejected: nested compression (gzip inside gzip)")
    }

    @Test func plainTarIsNotAccepted() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.tar([Build.index]),
            "archive rejected: not a tar.gz, tar.zst or zip archive")
    }

    @Test func zstdInsideGzip() throws {
        let sandbox = try ExtractionSandbox()
        try Data(HostileArchive.tar([Build.index])).write(to: URL(fileURLWithPath: sandbox.tmp("inner.tar")))
        let made = try Subprocess.run("zstd", ["-q", "-f", "inner.tar", "-o", "inner.tar.zst"], directory: sandbox.tmp.path)
        try #require(made.status == 0)
        let inner = try Data(contentsOf: URL(fileURLWithPath: sandbox.tmp("inner.tar.zst")))
        try sandbox.expectRejected(HostileArchive.gzip(Array(inner)), "archive rejected: nested compression (zstd inside gzip)")
    }

    @Test func bzip2InsideGzip() throws {
        let fakeBzip2 = Array("BZh91AY&SY".utf8) + Array(repeating: 0x11, count: 600)
        try ExtractionSandbox().expectRejected(HostileArchive.gzip(fakeBzip2), "archive rejected: nested compression (bzip2 inside gzip)")
    }

    @Test func sparseFileClaimingOneTebibyte() throws {
        // pax sparse format 1.0: the map ("1 region: offset 0, 0 bytes") heads the data.
        let records = [
            ("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"), ("GNU.sparse.name", "sparse.bin"),
            ("GNU.sparse.realsize", "1099511627776"),
        ].flatMap { HostileArchive.paxRecord($0.0, Array($0.1.utf8)) }
        var tar = HostileArchive.tar([Build.index], endMarker: false)
        tar += HostileArchive.header(name: Array("PaxHeaders/sparse".utf8), type: UInt8(ascii: "x"), size: records.count, mode: 0o644, link: [])
        tar += records + [UInt8](repeating: 0, count: (512 - records.count % 512) % 512)
        let map = Array("1\n0\n0\n".utf8)
        tar += HostileArchive.header(name: Array("GNUSparseFile.0/sparse.bin".utf8), type: UInt8(ascii: "0"), size: 512, mode: 0o644, link: [])
        tar += map + [UInt8](repeating: 0, count: 512 - map.count)
        tar += [UInt8](repeating: 0, count: 1024)
        try ExtractionSandbox().expectRejected(HostileArchive.gzip(tar), #"archive entry "sparse.bin" rejected: sparse file"#)
    }
}

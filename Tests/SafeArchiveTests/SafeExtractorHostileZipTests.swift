import ClientUpdater
import Foundation
import SafeArchive
import TestSupport
import Testing

/// One test per hostile zip case: the exact error, the sandbox unchanged, no staging left.
@Suite struct SafeExtractorHostileZipTests {
    typealias Entry = HostileArchive.ZipEntry
    static let index = Entry.file("index.html", "<html>ok</html>")

    @Test func validHandMadeZipIsAccepted() throws {
        let sandbox = try ExtractionSandbox()
        let report = try sandbox.extract(HostileArchive.zip([Self.index, .directory("assets/"), .file("assets/a.js", "x")]))
        #expect(report.format == .zip)
        #expect(report.files == 2)
        #expect(try String(contentsOfFile: sandbox.staging + "/assets/a.js", encoding: .utf8) == "x")
    }

    @Test func dotDotTraversal() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([Self.index, .file("../evil.txt", "x")]),
            #"archive entry "../evil.txt" rejected: ".." path component"#)
    }

    @Test func absolutePath() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([Self.index, .file("/tmp/evil.txt", "x")]),
            #"archive entry "/tmp/evil.txt" rejected: absolute path"#)
    }

    @Test func symlink() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([Self.index, .symlink("link", to: "/etc/passwd")]),
            #"archive entry "link" rejected: symbolic link"#)
    }

    @Test func fifoInExternalAttributes() throws {
        let entry = Entry(name: Array("pipe".utf8), unixMode: 0o010644)
        try ExtractionSandbox().expectRejected(HostileArchive.zip([Self.index, entry]), #"archive entry "pipe" rejected: fifo"#)
    }

    @Test func setuidBitIsIgnored() throws {
        let sandbox = try ExtractionSandbox()
        _ = try sandbox.extract(HostileArchive.zip([Self.index, Entry(name: Array("run.sh".utf8), data: [0x23], unixMode: 0o104755)]))
        var info = stat()
        #expect(stat(sandbox.staging + "/run.sh", &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o644)
    }

    @Test func badCRC() throws {
        let entry = Entry(name: Array("index.html".utf8), data: Array("<html>ok</html>".utf8), crc: 0xDEAD_BEEF)
        let good = HostileArchive.crc32(Array("<html>ok</html>".utf8))
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([entry]),
            String(format: "archive entry \"index.html\" rejected: ZIP bad CRC: 0x%x should be 0xdeadbeef", good))
    }

    @Test func localNameDiffersFromCentralDirectory() throws {
        let entry = Entry(name: Array("index.html".utf8), data: Array("x".utf8), localName: Array("../evil.html".utf8))
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([entry]),
            #"archive entry "../evil.html" rejected: zip local header name differs from central directory name "index.html""#)
    }

    @Test func noCentralDirectory() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([Self.index], centralDirectory: false),
            "archive rejected: zip end of central directory not found")
    }

    @Test func truncatedZip() throws {
        let bytes = HostileArchive.zip([Self.index, .file("app.js", String(repeating: "x", count: 3000))])
        try ExtractionSandbox().expectRejected(
            Array(bytes.prefix(bytes.count - 30)),
            "archive rejected: zip end of central directory not found")
    }

    @Test func duplicateEntry() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([Self.index, .file("index.html", "evil")]),
            #"archive entry "index.html" rejected: duplicate entry"#)
    }

    @Test func nulInName() throws {
        let entry = Entry(name: Array("index.html".utf8) + [0] + Array(".evil".utf8), data: [0x78])
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([Self.index, entry]),
            #"archive entry "index.html\u{0}.evil" rejected: NUL byte in name"#)
    }

    @Test func backslashName() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([Self.index, .file("..\\..\\evil.txt", "x")]),
            #"archive entry "..\\..\\evil.txt" rejected: backslash in name"#)
    }

    @Test func tooManyEntries() throws {
        let entries = [Self.index] + (1...5).map { Entry.file("f\($0).txt", "x") }
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip(entries), "archive rejected: more than 5 entries",
            limits: ExtractionLimits(maxEntries: 5))
    }

    @Test func emptyZip() throws {
        try ExtractionSandbox().expectRejected(HostileArchive.zip([]), "archive rejected: archive has no entries")
    }

    @Test func missingIndex() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([.file("app.js", "x")]),
            "archive rejected: no index.html file at the archive root")
    }

    @Test func nonASCIINameWithoutTheUTF8Flag() throws {
        try ExtractionSandbox().expectRejected(
            HostileArchive.zip([Self.index, .file("caf\u{E9}.txt", "x")]),
            #"archive entry "café.txt" rejected: name is not flagged as UTF-8"#)
    }

    @Test func overlappingEntriesBomb() throws {
        let bytes = HostileArchive.zipOverlapping(names: ["index.html", "a.bin", "b.bin"], kernel: Array(repeating: 0x41, count: 1000))
        try ExtractionSandbox().expectRejected(bytes, #"archive entry "index.html" rejected: zip entry data overlaps the next entry"#)
    }
}

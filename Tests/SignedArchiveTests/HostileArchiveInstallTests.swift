import ClientFoundation
import ClientUpdater
import Foundation
import SafeArchive
import SignedArchive
import TestSupport
import Testing

/// Hostile archives, validly signed (the key was stolen, or the build server was), go
/// through the whole install: each is refused with a precise error naming the release,
/// the entry and the reason, and the device root is left exactly as it was.
@Suite struct HostileArchiveInstallTests {
    typealias E = HostileArchive.TarEntry

    static let index = E.file("index.html", "<html><head></head><body>evil</body></html>")

    static func tgz(_ entries: [E]) -> Data { Data(HostileArchive.gzip(HostileArchive.tar(entries))) }

    /// name, archive bytes, expected fragment of the error.
    static let cases: [(String, Data, String)] = [
        ("dot-dot traversal", tgz([index, E.file("../escape.txt", "x")]), "archive entry \"../escape.txt\" rejected: \"..\" path component"),
        (
            "absolute path", tgz([index, E.file("/tmp/clientctl-escape.txt", "x")]),
            "archive entry \"/tmp/clientctl-escape.txt\" rejected: absolute path"
        ),
        ("symlink inside", tgz([index, E.symlink("alias.html", to: "index.html")]), "archive entry \"alias.html\" rejected: symbolic link"),
        ("symlink escaping", tgz([E.symlink("index.html", to: "/etc/passwd")]), "archive entry \"index.html\" rejected: symbolic link"),
        ("hardlink", tgz([index, E.hardlink("copy.html", to: "index.html")]), "archive entry \"copy.html\" rejected: hard link"),
        ("device node", tgz([index, E.characterDevice("null")]), "archive entry \"null\" rejected: character device"),
        ("fifo", tgz([index, E.fifo("pipe")]), "archive entry \"pipe\" rejected: fifo"),
        ("missing index.html", tgz([E.file("app.js", "x")]), "no index.html file at the archive root"),
        ("empty archive", tgz([]), "archive has no entries"),
        (
            "truncated archive",
            Data(HostileArchive.gzip(Array(HostileArchive.tar([index, E.file("big.bin", String(repeating: "a", count: 50_000))]).prefix(5_000)))),
            "Truncated tar archive"
        ),
        ("corrupt gzip trailer", corruptTrailer(tgz([index])), "gzip CRC-32 mismatch"),
        ("not an archive", Data("just some text, not a tar or zip".utf8), "archive rejected: not a tar.gz, tar.zst or zip archive"),
    ]

    static func corruptTrailer(_ data: Data) -> Data {
        var d = data
        d[d.count - 6] ^= 0xFF  // inside the CRC32 of the gzip trailer
        return d
    }

    @Test(arguments: 0..<cases.count)
    func hostileArchiveIsRefusedAndTheRootUnchanged(_ i: Int) async throws {
        let (name, archive, expected) = Self.cases[i]
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        _ = try await f.updater().install()
        try f.releases.publish("1.1.0", archive: archive)
        let before = try f.snapshot()
        do {
            let report = try await f.updater().install()
            Issue.record("\(name): expected a rejection, got \(report)")
        } catch let error as any ClientctlError {
            #expect(error.message.contains("release 1.1.0"), "\(name): \(error.message)")
            #expect(error.message.contains(expected), "\(name): \(error.message)")
            #expect(error.kind == .dataError, "\(name)")
        }
        let after = try f.snapshot()
        #expect(after == before, "\(name): root changed: \(after.difference(from: before))")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/clientctl-escape.txt"))
        #expect(!FileManager.default.fileExists(atPath: f.tmp("escape.txt")))
    }

    @Test func gzipBombBeyondTheCapIsStopped() async throws {
        let f = try DeviceFixture()
        f.config.limits.maxUnpackedBytes = 4 << 20
        try await RootInitializer.write(f.config, to: f.layout, force: true, store: f.layout.clients)
        let zeros = E.file("zeros.bin", String(repeating: "\0", count: 8 << 20))
        try f.releases.publish("1.0.0", archive: Self.tgz([Self.index, zeros]))
        let before = try f.snapshot()
        await #expect(throws: (any Error).self) { try await f.updater().install() }
        #expect(try f.snapshot() == before)
    }

    @Test func tooManyEntriesIsStopped() async throws {
        let f = try DeviceFixture()
        f.config.limits.maxEntries = 50
        try await RootInitializer.write(f.config, to: f.layout, force: true, store: f.layout.clients)
        let many = (0..<60).map { E.file("f\($0).txt", "x") }
        try f.releases.publish("1.0.0", archive: Self.tgz([Self.index] + many))
        let before = try f.snapshot()
        do {
            _ = try await f.updater().install()
            Issue.record("expected the entry cap to stop the install")
        } catch let error as SafeArchiveError {
            #expect(error.code == .archiveLimit)
            #expect(error.message.hasPrefix("release 1.0.0 (v1.0.0.tar.gz): archive entry "), "\(error.message)")
            #expect(error.message.contains("rejected: more than 50 entries"), "\(error.message)")
        }
        #expect(try f.snapshot() == before)
    }

    @Test func setuidBitIsStrippedAndModesNormalised() async throws {
        let f = try DeviceFixture()
        let suid = E.file("tool.sh", "#!/bin/sh\n", mode: 0o4755)
        try f.releases.publish("1.0.0", archive: Self.tgz([Self.index, E.directory("dir/"), suid]))
        _ = try await f.updater().install()
        let dir = f.layout.clientDirectory(Version(1, 0, 0))
        var st = stat()
        #expect(stat(dir + "/tool.sh", &st) == 0)
        #expect(st.st_mode & 0o7777 == 0o644)
        #expect(stat(dir + "/dir", &st) == 0)
        #expect(st.st_mode & 0o7777 == 0o755)
    }
}

import ClientUpdater
import Foundation
import TestSupport
import Testing

/// ``FilePlacement``, the one link-or-copy rule: a hard link on one file system, a
/// renamed-into-place copy across file systems (`/dev/shm` is a tmpfs here), never a
/// leftover temporary.
@Suite struct FilePlacementTests {
    func inode(_ path: String) -> UInt64? {
        var st = stat()
        return lstat(path, &st) == 0 ? UInt64(st.st_ino) : nil
    }

    @Test func linksOnOneFileSystem() throws {
        let tmp = try TemporaryDirectory("placement")
        try Data("bytes".utf8).write(to: URL(fileURLWithPath: tmp("a")))
        #expect(try FilePlacement.linkOrCopy(tmp("a"), to: tmp("b")))
        #expect(inode(tmp("a")) != nil && inode(tmp("a")) == inode(tmp("b")))
    }

    @Test func copiesAcrossFileSystemsWithoutLeftovers() throws {
        let shm = "/dev/shm"
        var a = stat()
        var b = stat()
        guard stat(shm, &a) == 0, stat(NSTemporaryDirectory(), &b) == 0, a.st_dev != b.st_dev else { return }
        let source = try TemporaryDirectory("placement-src")
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try payload.write(to: URL(fileURLWithPath: source("big.bin")))
        let target = shm + "/clientctl-placement-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: target) }
        #expect(try FilePlacement.linkOrCopy(source("big.bin"), to: target + "/big.bin") == false, "a copy, not a link")
        #expect(FileManager.default.contents(atPath: target + "/big.bin") == payload)
        #expect(try FileManager.default.contentsOfDirectory(atPath: target) == ["big.bin"], "no temporary copy is left")
    }

    @Test func anExistingDestinationIsAnError() throws {
        let tmp = try TemporaryDirectory("placement")
        try Data("a".utf8).write(to: URL(fileURLWithPath: tmp("a")))
        try Data("b".utf8).write(to: URL(fileURLWithPath: tmp("b")))
        #expect(throws: UpdaterError.self) { try FilePlacement.linkOrCopy(tmp("a"), to: tmp("b")) }
        #expect(FileManager.default.contents(atPath: tmp("b")) == Data("b".utf8))
    }
}

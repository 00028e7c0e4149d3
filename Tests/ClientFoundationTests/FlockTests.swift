import ClientFoundation
import Foundation
import TestSupport
import Testing

/// ClientFoundation's one `flock`, judged against util-linux's `flock(1)` in another
/// process: what one holds, the other cannot take, and a release or the holder's end frees it.
@Suite struct FlockTests {
    /// `flock --exclusive --nonblock PATH true`: 0 when it could take the lock, 1 when held.
    static func otherProcessCanLock(_ path: String) async throws -> Bool {
        let run = try await Subprocess.run("flock", ["--exclusive", "--nonblock", path, "true"])
        return run.status == 0
    }

    @Test func aHeldLockFileIsRefusedToOthersUntilReleased() async throws {
        let tmp = try TemporaryDirectory("flock")
        let lock = try #require(try Flock.attempt(tmp("lock"), .file))
        #expect(try await !Self.otherProcessCanLock(tmp("lock")), "flock(1) took a lock we hold")
        #expect(try Flock.attempt(tmp("lock"), .file) == nil, "a second descriptor of ours is refused too")
        lock.release()
        lock.release()  // again: nothing
        // As soon as no child forked by another test still holds the open file until its exec.
        try await Poll.until("flock(1) takes the released lock", timeout: 60) { try await Self.otherProcessCanLock(tmp("lock")) }
    }

    @Test func aFolderIsLockedWithoutWritingIntoIt() async throws {
        let tmp = try TemporaryDirectory("flock-folder")
        try FileManager.default.createDirectory(atPath: tmp("releases"), withIntermediateDirectories: true)
        do {
            let lock = try #require(try Flock.waiting(tmp("releases"), .folder, for: .seconds(1)))
            #expect(try await !Self.otherProcessCanLock(tmp("releases")))
            withExtendedLifetime(lock) {}
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp("releases")).isEmpty)
        #expect(try await Self.otherProcessCanLock(tmp("releases")), "the lock went with the value")
    }

    @Test func aWaiterGivesUpAtItsDeadline() throws {
        let tmp = try TemporaryDirectory("flock-wait")
        let held = try #require(try Flock.attempt(tmp("lock"), .file))
        #expect(try Flock.waiting(tmp("lock"), .file, for: .milliseconds(200)) == nil)
        held.release()
        #expect(try Flock.waiting(tmp("lock"), .file, for: .milliseconds(200)) != nil)
    }

    @Test func aPlantedSymlinkOrFIFOIsNeverOpened() throws {
        let tmp = try TemporaryDirectory("flock-planted")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: tmp("target")))
        #expect(symlink(tmp("target"), tmp("lock")) == 0)
        #expect(throws: Flock.Failure.symlink) { try Flock.attempt(tmp("lock"), .file) }
        #expect(mkfifo(tmp("fifo"), 0o644) == 0)
        #expect(throws: Flock.Failure.notRegularFile) { try Flock.attempt(tmp("fifo"), .file) }
        #expect(try String(contentsOfFile: tmp("target"), encoding: .utf8) == "keep")
    }

    /// The first-byte lock (a root's update-check lock) is what the kernel calls an OFD
    /// lock of byte 0, as util-linux's `lslocks` reads /proc/locks; it keeps out a second
    /// open file of ours, and leaves the whole-file `flock` free to `flock(1)` (the root's
    /// writers take that one while a check runs).
    @Test func theFirstByteLockIsAnOFDLockBesideTheFlock() async throws {
        let tmp = try TemporaryDirectory("flock-ofd")
        let path = tmp("lock")
        let lock = try #require(try Flock.attempt(path, .file, .firstByte))
        // lslocks 2.38 names no path for an OFD lock (it has no owning pid): the inode it is.
        var st = stat()
        #expect(stat(path, &st) == 0)
        let listed = try await Subprocess.run("lslocks", ["--noheadings", "--raw", "--output", "TYPE,MODE,START,END,INODE"])
        let line = listed.output.split(separator: "\n").first { $0.hasSuffix(" \(st.st_ino)") }
        #expect(line.map(String.init) == "OFDLCK WRITE 0 0 \(st.st_ino)", "lslocks: \(listed.output)")
        #expect(try Flock.attempt(path, .file, .firstByte) == nil, "a second open file of ours is refused")
        #expect(try await Self.otherProcessCanLock(path), "flock(1) is not held back by the first byte")
        lock.release()
        // Free once no process holds the open file any more: a child another test forks just
        // then holds it until its exec closes it (O_CLOEXEC), so wait for that, bounded.
        try await Poll.until("the first byte free again", timeout: 60) { try Flock.attempt(path, .file, .firstByte) != nil }
    }
}

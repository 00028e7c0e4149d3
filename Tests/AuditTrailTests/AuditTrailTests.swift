import ClientFoundation
import Foundation
import SignedManifest
import TestSupport
import Testing

@testable import AuditTrail

/// The trail on disk: appends that chain and verify, appenders that race, and every way an
/// entry can be tampered with named by its number.
@Suite struct AuditTrailTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(_ k: Int, operatorName: String = "ada") -> AuditRecord {
        AuditRecord(
            time: start.addingTimeInterval(Double(k) * 60), operatorName: operatorName, address: "192.0.2.7", act: "halt",
            target: "stable 1.4.\(k)", before: "1.4.\(k) 100%", after: "1.4.\(k) paused", result: "ok")
    }

    /// A trail of `count` entries signed by `key`.
    static func trail(_ count: Int, key: Ed25519.PrivateKey, in dir: TemporaryDirectory) async throws -> String {
        let path = dir("audit.jsonl")
        for k in 1...count { _ = try await AuditTrail.append(record(k), to: path, signer: key) }
        return path
    }

    static func lines(_ path: String) throws -> [[UInt8]] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map(Array.init)
    }

    static func write(_ lines: [[UInt8]], to path: String) throws {
        try Data(lines.flatMap { $0 + [0x0A] }).write(to: URL(fileURLWithPath: path))
    }

    @Test func appendedEntriesReadBackChainAndVerify() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = dir("audit.jsonl")
        var appended: [AuditEntry] = []
        for k in 1...3 { appended.append(try await AuditTrail.append(Self.record(k), to: path, signer: key)) }

        #expect(appended.map(\.seq) == [1, 2, 3])
        #expect(appended.map(\.record) == (1...3).map { Self.record($0) })
        #expect(try AuditTrail.read(path) == appended)
        let lines = try Self.lines(path)
        #expect(lines.count == 3)
        #expect(appended[0].previous == String(repeating: "0", count: 64))
        #expect(appended[1].previous == Digest.hex(.sha256, of: lines[0]))
        #expect(appended[2].previous == Digest.hex(.sha256, of: lines[1]))
        #expect(appended.allSatisfy { $0.keyId == key.publicKey.keyId })
        #expect(try AuditTrail.verify(path, trust: [key.publicKey]) == .intact(entries: 3, head: Digest.hex(.sha256, of: lines[2])))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let mode = try #require(attributes[.posixPermissions] as? Int)
        #expect(mode & 0o077 == 0, "the trail is the owner's alone, mode \(String(mode, radix: 8))")
        // The line is the documented object, field by field.
        let json = try JSONSerialization.jsonObject(with: Data(lines[0]))
        let object = try #require(json as? [String: Any])
        #expect(
            Set(object.keys) == ["seq", "time", "operator", "address", "act", "target", "before", "after", "result", "previous", "key", "signature"])
        #expect(object["time"] as? String == "2027-01-15T08:01:00Z")
        #expect(object["operator"] as? String == "ada")
    }

    @Test func anEmptyTrailVerifiesWithNoEntries() throws {
        let dir = try TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: dir("audit.jsonl"), contents: Data())
        let key = try Ed25519.PrivateKey.generate()
        #expect(try AuditTrail.verify(dir("audit.jsonl"), trust: [key.publicKey]) == .intact(entries: 0, head: String(repeating: "0", count: 64)))
        #expect(try AuditTrail.read(dir("audit.jsonl")).isEmpty)
    }

    @Test func aMissingTrailIsNotFound() throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        #expect(throws: AuditTrailError.self) { try AuditTrail.read(dir("none.jsonl")) }
        do {
            _ = try AuditTrail.verify(dir("none.jsonl"), trust: [key.publicKey])
            Issue.record("a missing trail verified")
        } catch let error as AuditTrailError {
            #expect(error.code == .notFound)
            #expect(error.message.contains("none.jsonl"))
        }
    }

    @Test func concurrentAppendersAllLandInOrder() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = dir("audit.jsonl")
        let count = 48
        let pem = try key.pemRepresentation()
        let entries = try await withThrowingTaskGroup(of: AuditEntry.self) { group in
            for k in 1...count {
                group.addTask {
                    // A key of its own in each task, as another process would load it.
                    try await AuditTrail.append(Self.record(k, operatorName: "op\(k)"), to: path, signer: try Ed25519.PrivateKey(pem: pem))
                }
            }
            var all: [AuditEntry] = []
            for try await entry in group { all.append(entry) }
            return all
        }
        #expect(entries.map { $0.seq }.sorted() == Array(1...count))
        let read = try AuditTrail.read(path)
        #expect(read.map { $0.seq } == Array(1...count))
        #expect(Set(read.map { $0.record.operatorName }) == Set((1...count).map { "op\($0)" }))
        #expect(Set(read) == Set(entries))
        guard case .intact(entries: count, head: _) = try AuditTrail.verify(path, trust: [key.publicKey]) else {
            Issue.record("the raced trail does not verify")
            return
        }
    }

    @Test(arguments: ["operator", "seq", "previous", "signature", "time", "{", "newline"])
    func oneChangedByteNamesItsEntry(_ place: String) async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = try await Self.trail(5, key: key, in: dir)
        var lines = try Self.lines(path)
        var line = lines[2]
        var newline = false
        switch place {
        case "{": line[0] = UInt8(ascii: "[")
        case "newline": newline = true
        default:
            // The first byte of the field's value (past `"name":` and, for a string, its quote).
            let name = Array("\"\(place)\":".utf8)
            let at = try #require(line.indices.first { line[$0...].starts(with: name) }) + name.count + (place == "seq" ? 0 : 1)
            line[at] = line[at] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
        }
        if newline {
            // The newline after entry 3 becomes a space: entries 3 and 4 run together.
            lines[2] = line + [UInt8(ascii: " ")] + lines[3]
            lines.remove(at: 3)
        } else {
            lines[2] = line
        }
        try Self.write(lines, to: path)
        let result = try AuditTrail.verify(path, trust: [key.publicKey])
        guard case .broken(seq: 3, reason: let reason) = result else {
            Issue.record("a byte changed in entry 3's \(place): \(result)")
            return
        }
        #expect(reason.contains("changed"), "\(reason)")
    }

    @Test func aChangedByteInTheKeyIdReadsAsAnotherKey() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = try await Self.trail(4, key: key, in: dir)
        var lines = try Self.lines(path)
        let text = String(decoding: lines[1], as: UTF8.self)
        let id = key.publicKey.keyId
        let other = String(id.dropLast()) + (id.last == "0" ? "1" : "0")
        lines[1] = Array(text.replacingOccurrences(of: "\"key\":\"\(id)\"", with: "\"key\":\"\(other)\"").utf8)
        try Self.write(lines, to: path)
        guard case .broken(seq: 2, reason: let reason) = try AuditTrail.verify(path, trust: [key.publicKey]) else {
            Issue.record("a changed key id was not caught at entry 2")
            return
        }
        #expect(reason.contains(other))
    }

    @Test(arguments: [1, 3, 5])
    func aDroppedEntryIsNamed(_ dropped: Int) async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = try await Self.trail(6, key: key, in: dir)
        var lines = try Self.lines(path)
        lines.remove(at: dropped - 1)
        try Self.write(lines, to: path)
        guard case .broken(seq: dropped, reason: let reason) = try AuditTrail.verify(path, trust: [key.publicKey]) else {
            Issue.record("dropping entry \(dropped) was not caught there")
            return
        }
        #expect(reason.contains("dropped"), "\(reason)")
    }

    @Test func twoSwappedEntriesAreNamed() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = try await Self.trail(5, key: key, in: dir)
        var lines = try Self.lines(path)
        lines.swapAt(1, 3)
        try Self.write(lines, to: path)
        guard case .broken(seq: 2, reason: let reason) = try AuditTrail.verify(path, trust: [key.publicKey]) else {
            Issue.record("swapping entries 2 and 4 was not caught at 2")
            return
        }
        #expect(reason.contains("reordered"), "\(reason)")
    }

    @Test func anEntryAppendedWithAnotherKeyIsNamed() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let intruder = try Ed25519.PrivateKey.generate()
        let path = try await Self.trail(4, key: key, in: dir)
        // The intruder chains correctly: only the key gives it away.
        _ = try await AuditTrail.append(Self.record(5, operatorName: "mallory"), to: path, signer: intruder)
        _ = try await AuditTrail.append(Self.record(6), to: path, signer: key)
        guard case .broken(seq: 5, reason: let reason) = try AuditTrail.verify(path, trust: [key.publicKey]) else {
            Issue.record("an entry signed by an untrusted key was not caught at 5")
            return
        }
        #expect(reason.contains("without the key") && reason.contains(intruder.publicKey.keyId), "\(reason)")
        // Trusting both keys, the same trail is intact.
        guard case .intact(entries: 6, head: _) = try AuditTrail.verify(path, trust: [key.publicKey, intruder.publicKey]) else {
            Issue.record("a trail signed by two trusted keys does not verify")
            return
        }
    }

    @Test func anEntryFromAnotherTrailWithTheSameKeyBreaksTheChain() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = try await Self.trail(4, key: key, in: dir)
        let other = dir("other.jsonl")
        for k in 1...4 { _ = try await AuditTrail.append(Self.record(k, operatorName: "someone else"), to: other, signer: key) }
        var lines = try Self.lines(path)
        lines[2] = try Self.lines(other)[2]
        try Self.write(lines, to: path)
        guard case .broken(seq: 3, reason: let reason) = try AuditTrail.verify(path, trust: [key.publicKey]) else {
            Issue.record("a substituted entry 3 was not caught at 3")
            return
        }
        #expect(reason.contains("does not follow entry 2"), "\(reason)")
    }

    @Test(arguments: [1, 40])
    func aTruncatedLastLineIsNamedAndRefusesAppends(_ cut: Int) async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = try await Self.trail(5, key: key, in: dir)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes.removeLast(cut)
        try bytes.write(to: URL(fileURLWithPath: path))
        guard case .broken(seq: 5, reason: let reason) = try AuditTrail.verify(path, trust: [key.publicKey]) else {
            Issue.record("a last line cut by \(cut) bytes was not caught at 5")
            return
        }
        #expect(reason.contains("truncated"), "\(reason)")
        do {
            _ = try await AuditTrail.append(Self.record(6), to: path, signer: key)
            Issue.record("a broken trail was extended")
        } catch let error as AuditTrailError {
            #expect(error.code == .rejected)
            #expect(error.message.contains("cut off"), "\(error.message)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func aChangedLastEntryRefusesAppends() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = try await Self.trail(2, key: key, in: dir)
        var lines = try Self.lines(path)
        lines[1] = Array("{\"seq\":2}".utf8)
        try Self.write(lines, to: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        await #expect(throws: AuditTrailError.self) { try await AuditTrail.append(Self.record(3), to: path, signer: key) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func controlCharactersAreStoredEscapedAndReadBackAsGiven() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = dir("audit.jsonl")
        var record = Self.record(1)
        record.operatorName = "eve\u{1b}[2J\u{7}\r\nfake line"
        record.target = "\u{202e}lebal"
        let entry = try await AuditTrail.append(record, to: path, signer: key)
        #expect(entry.record == record)
        let line = try #require(try Self.lines(path).first)
        #expect(!line.contains(0x1B) && !line.contains(0x0D) && !line.contains(0x07))
        #expect(try AuditTrail.read(path).first?.record == record)
        guard case .intact(entries: 1, head: _) = try AuditTrail.verify(path, trust: [key.publicKey]) else {
            Issue.record("a record with control characters does not verify")
            return
        }
    }

    @Test func anOverlongFieldIsCutAndSaysSo() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        var record = Self.record(1)
        record.operatorName = String(repeating: "é", count: 10_000)
        let entry = try await AuditTrail.append(record, to: dir("audit.jsonl"), signer: key)
        #expect(entry.record.operatorName.utf8.count <= AuditTrail.maxFieldBytes)
        #expect(entry.record.operatorName.hasPrefix("éé"))
        #expect(entry.record.operatorName.hasSuffix("(cut: 20000 bytes)"))
        #expect(try AuditTrail.read(dir("audit.jsonl")) == [entry])
    }

    /// Pages read backwards from the end are the trail's entries, newest first, across
    /// chunk boundaries (lines of every length, the file well over one 64 KiB chunk).
    @Test func pagesOfTheNewestEntriesMatchTheWholeTrail() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = dir("audit.jsonl")
        for k in 1...240 {
            var record = Self.record(k)
            record.result = "failed: " + String(repeating: "x", count: (k * 37) % 1_500)
            _ = try await AuditTrail.append(record, to: path, signer: key)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count > 3 * 64 * 1024)
        let newestFirst = Array(try AuditTrail.read(path).reversed())
        for (skip, limit) in [(0, 10), (5, 20), (230, 20), (0, 1_000), (240, 5), (239, 1), (100, 0)] {
            let page = try AuditTrail.readNewest(path, skipping: skip, limit: limit)
            #expect(page == Array(newestFirst.dropFirst(skip).prefix(limit)), "skipping \(skip), limit \(limit)")
        }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes.removeLast()
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(throws: AuditTrailError.self) { try AuditTrail.readNewest(path, limit: 10) }
        #expect(throws: AuditTrailError.self) { try AuditTrail.readNewest(dir("none.jsonl"), limit: 10) }
    }

    /// An appender that finds the lock held past its wait gives up with `io`, appending
    /// nothing; once the lock is free the next append lands. Time is a manual clock.
    @Test func aLockHeldPastTheWaitIsReported() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = dir("audit.jsonl")
        _ = try await AuditTrail.append(Self.record(1), to: path, signer: key)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let holder = try #require(try Flock.attempt(path, .file))
        let clock = ManualClock()
        let pem = try key.pemRepresentation()
        let waiting = Task {
            try await AuditTrail.append(
                Self.record(2), to: path, signer: try Ed25519.PrivateKey(pem: pem), wait: LockWait(.seconds(1), clock: MonotonicClock(clock)))
        }
        try await clock.waitForSleeper()
        await clock.advance(by: .seconds(2))
        do {
            _ = try await waiting.value
            Issue.record("an append went past a held lock")
        } catch let error as AuditTrailError {
            #expect(error.code == .io)
            #expect(error.message.contains("another appender held its lock"), "\(error.message)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        holder.release()
        #expect(try await AuditTrail.append(Self.record(2), to: path, signer: key).seq == 2)
    }

    /// A symbolic link or a FIFO planted at the trail's path is refused at once: never
    /// followed, never waited on.
    @Test func aPlantedLinkOrFIFOIsRefused() async throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        try Data("elsewhere\n".utf8).write(to: URL(fileURLWithPath: dir("target")))
        try FileManager.default.createSymbolicLink(atPath: dir("link.jsonl"), withDestinationPath: dir("target"))
        do {
            _ = try await AuditTrail.append(Self.record(1), to: dir("link.jsonl"), signer: key)
            Issue.record("an append followed a symbolic link")
        } catch let error as AuditTrailError {
            #expect(error.message.contains("symbolic link"), "\(error.message)")
        }
        #expect(try String(contentsOfFile: dir("target"), encoding: .utf8) == "elsewhere\n")

        #expect(mkfifo(dir("fifo.jsonl"), 0o600) == 0)
        #expect(throws: AuditTrailError.self) { try AuditTrail.read(dir("fifo.jsonl")) }
        #expect(throws: AuditTrailError.self) { try AuditTrail.verify(dir("fifo.jsonl"), trust: [key.publicKey]) }
        await #expect(throws: AuditTrailError.self) { try await AuditTrail.append(Self.record(1), to: dir("fifo.jsonl"), signer: key) }
    }

    @Test func anAbsurdLineIsRefusedBeforeItIsHeld() throws {
        let dir = try TemporaryDirectory()
        let key = try Ed25519.PrivateKey.generate()
        let path = dir("audit.jsonl")
        try Data(repeating: UInt8(ascii: "x"), count: AuditTrail.maxLineBytes + 10).write(to: URL(fileURLWithPath: path))
        #expect(throws: AuditTrailError.self) { try AuditTrail.read(path) }
        guard case .broken(seq: 1, reason: _) = try AuditTrail.verify(path, trust: [key.publicKey]) else {
            Issue.record("an absurd line verified")
            return
        }
    }
}

import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// The audit trail (docs/audit-trail.md): a JSON Lines file of signed, hash-chained
/// entries, one per act on the fleet, appended by the console and the command line and
/// checked by `clientctl audit verify`.
///
/// Each line is the canonical JSON (RFC 8785) of one entry: `seq` (its line number),
/// the record's fields, `previous` (the SHA-256 of the line before it), `key` (the
/// signer's key id) and `signature` (Ed25519 over the canonical JSON of the entry without
/// `signature`). Changing, dropping, reordering or cutting an entry, or appending one
/// without the key, breaks the chain or a signature at that entry.
public enum AuditTrail {
    /// The longest line a trail may hold (256 KiB): a reader refuses a longer one before it
    /// holds more of it.
    public static let maxLineBytes = 256 * 1024

    /// The longest text field ``append(_:to:signer:)`` stores (4 KiB of UTF-8); a longer
    /// one is cut and says how long it was.
    public static let maxFieldBytes = 4 * 1024

    /// How long ``append(_:to:signer:)`` waits for another appender's lock.
    static let lockWait = Duration.seconds(60)

    /// Appends `record` to the trail at `path` as its next entry, signed by `signer`, and
    /// returns the entry as written (its time in whole seconds, over-long fields cut).
    ///
    /// Holds an exclusive `flock` on the trail while it reads the last line, signs and
    /// writes, so appenders in this process and in others all land, one after another.
    /// The line is written with one `write` to the end and fsynced before this returns.
    /// Creates the file (mode 0600) when it does not exist.
    ///
    /// - Throws: ``AuditTrailError`` `rejected` when the last line is not a whole entry
    ///   (cut off, changed): a broken trail is never extended; `io` when the file cannot
    ///   be opened, locked or written (nothing is left half-written); what `signer` throws.
    public static func append(_ record: AuditRecord, to path: String, signer: any DocumentSigner) async throws -> AuditEntry {
        try await append(record, to: path, signer: signer, wait: LockWait(lockWait))
    }

    /// ``append(_:to:signer:)`` with the wait for the lock given.
    static func append(_ record: AuditRecord, to path: String, signer: any DocumentSigner, wait: LockWait) async throws -> AuditEntry {
        let record = stored(record)
        let (fd, created) = try TrailFile.openForAppending(path)
        defer { close(fd) }
        if created { syncFolder(of: path) }
        let lock: Flock
        do {
            lock = try Flock.opening(path, .file)
        } catch {
            throw AuditTrailError(.io, "cannot lock \(path): \(error)")
        }
        defer { lock.release() }
        let taken: Bool
        do {
            taken = try await wait.until { try lock.tryLock() }
        } catch let failure as Flock.Failure {
            throw AuditTrailError(.io, "cannot lock \(path): \(failure)")
        }
        guard taken else { throw AuditTrailError(.io, "cannot append to \(path): another appender held its lock for \(wait.wait)") }

        var st = stat()
        guard fstat(fd, &st) == 0 else { throw TrailFile.failure("cannot read", path, errno) }
        let size = Int(st.st_size)
        let last = try lastLine(fd: fd, size: size, path: path)
        let keyId = signer.publicKey.keyId
        let unsigned = AuditLine.unsigned(seq: last.seq + 1, record: record, previous: last.hash, keyId: keyId)
        let message = CanonicalJSON.serialize(unsigned)
        let signature = try await signer.sign(message)
        guard signer.publicKey.isValidSignature(signature, for: message) else {
            throw AuditTrailError(.rejected, "the signature made for \(path) does not verify with key \(keyId): nothing appended")
        }
        let line = AuditLine.bytes(unsigned, signature: signature)
        guard line.count <= maxLineBytes else {
            throw AuditTrailError(.invalidArgument, "the entry is \(line.count) bytes, over the \(maxLineBytes)-byte line cap: nothing appended")
        }
        try write(line + [0x0A], fd: fd, size: size, path: path)
        return AuditEntry(seq: last.seq + 1, record: record, previous: last.hash, keyId: keyId, signature: signature)
    }

    /// The newest entries of the trail at `path`, newest first: `limit` of them after the
    /// newest `skipping` (a page of a listing), read backwards from the end, so a page
    /// costs the same however long the trail. Parsed, not verified.
    /// - Throws: ``AuditTrailError`` `notFound` when there is no file; `rejected` when the
    ///   file does not end with a newline, or for a line of the page that is not a whole
    ///   entry or longer than ``maxLineBytes``; `io` when it cannot be read.
    public static func readNewest(_ path: String, skipping: Int = 0, limit: Int) throws -> [AuditEntry] {
        guard let fd = try TrailFile.openForReading(path) else { throw AuditTrailError(.notFound, "\(path) does not exist") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw TrailFile.failure("cannot read", path, errno) }
        var end = Int(st.st_size)
        guard end > 0, limit > 0 else { return [] }
        // `pending` holds the bytes read so far of the line being assembled (before `end`).
        var pending: [UInt8] = []
        var skipped = 0
        var entries: [AuditEntry] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var first = true
        while end > 0, entries.count < limit {
            let count = min(chunk.count, end)
            try readFully(fd, into: &chunk, count: count, at: end - count, path: path)
            end -= count
            var bytes = Array(chunk[0..<count]) + pending
            if first {
                guard bytes.last == 0x0A else {
                    throw AuditTrailError(.rejected, "\(path): its last entry is cut off (the file ends without a newline)")
                }
                bytes.removeLast()
                first = false
            }
            // Every whole line after the first newline of `bytes`; the part before it may
            // continue in the chunk before.
            var lineEnd = bytes.count
            while let newline = bytes[..<lineEnd].lastIndex(of: 0x0A), entries.count < limit {
                let line = Array(bytes[(newline + 1)..<lineEnd])
                lineEnd = newline
                if skipped < skipping {
                    skipped += 1
                    continue
                }
                entries.append(try newestEntry(line, path: path))
            }
            pending = Array(bytes[..<lineEnd])
            guard pending.count <= maxLineBytes else {
                throw AuditTrailError(.rejected, "\(path): an entry is longer than \(maxLineBytes) bytes")
            }
        }
        if end == 0, entries.count < limit, !pending.isEmpty, skipped >= skipping {
            entries.append(try newestEntry(pending, path: path))
        }
        return entries
    }

    private static func newestEntry(_ line: [UInt8], path: String) throws(AuditTrailError) -> AuditEntry {
        guard line.count <= maxLineBytes else { throw AuditTrailError(.rejected, "\(path): an entry is longer than \(maxLineBytes) bytes") }
        do {
            return try AuditLine.parse(line).entry
        } catch {
            throw AuditTrailError(.rejected, "\(path): a line is not an audit entry: \(error.reason)")
        }
    }

    private static func readFully(_ fd: Int32, into buffer: inout [UInt8], count: Int, at offset: Int, path: String) throws(AuditTrailError) {
        var got = 0
        while got < count {
            let n = buffer.withUnsafeMutableBytes { b in
                b.baseAddress.map { pread(fd, $0 + got, count - got, off_t(offset + got)) } ?? 0
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                throw n == 0 ? AuditTrailError(.io, "\(path) shrank while it was read") : TrailFile.failure("cannot read", path, errno)
            }
            got += n
        }
    }

    /// Checks, without writing, that ``append(_:to:signer:)`` would extend the trail at
    /// `path`: its last line is a whole entry, or it does not exist yet and its folder
    /// does. A command checks this before it acts, so a broken trail refuses the act
    /// rather than leave it unrecorded.
    /// - Throws: ``AuditTrailError`` `rejected` for a trail whose last line is not whole,
    ///   `notFound` for a folder that does not exist, `io` for a file that cannot be read.
    public static func checkAppendable(_ path: String) throws {
        guard let fd = try TrailFile.openForReading(path) else {
            let folder = (path as NSString).deletingLastPathComponent
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.isEmpty ? "." : folder, isDirectory: &isFolder), isFolder.boolValue else {
                throw AuditTrailError(.notFound, "cannot create \(path): its folder does not exist")
            }
            return
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw TrailFile.failure("cannot read", path, errno) }
        _ = try lastLine(fd: fd, size: Int(st.st_size), path: path)
    }

    /// The entries of the trail at `path`, parsed but not verified (no signature, chain or
    /// order is checked: ``verify(_:trust:)`` does that).
    ///
    /// Reads one line at a time; a line over ``maxLineBytes`` is refused before more of it
    /// is held.
    /// - Throws: ``AuditTrailError`` `notFound` when there is no file; `rejected` naming
    ///   the first line that is not a whole entry.
    public static func read(_ path: String) throws -> [AuditEntry] {
        let reading = try readUntilBroken(path)
        if let problem = reading.problem { throw problem }
        return reading.entries
    }

    /// The entries of the trail at `path` up to the first line that is not a whole entry,
    /// and the `rejected` error that names that line (nil when every line is one): what
    /// `clientctl audit show` prints of a broken trail. Parsed, not verified.
    /// - Throws: ``AuditTrailError`` `notFound` when there is no file, `io` when it cannot be
    ///   read.
    public static func readUntilBroken(_ path: String) throws -> (entries: [AuditEntry], problem: AuditTrailError?) {
        guard let fd = try TrailFile.openForReading(path) else { throw AuditTrailError(.notFound, "\(path) does not exist") }
        defer { close(fd) }
        var lines = TrailLines(fd: fd, path: path)
        var entries: [AuditEntry] = []
        var number = 0
        while let line = try lines.next() {
            number += 1
            let why: String
            switch line {
            case .whole(let bytes):
                do {
                    entries.append(try AuditLine.parse(bytes).entry)
                    continue
                } catch {
                    why = "is not an audit entry: \(error.reason)"
                }
            case .unterminated: why = "is cut off (the file ends without a newline)"
            case .tooLong: why = "is longer than \(maxLineBytes) bytes"
            }
            return (entries, AuditTrailError(.rejected, "\(path): entry \(number) \(why)"))
        }
        return (entries, nil)
    }

    /// Checks the whole trail at `path`: every line a whole entry, numbered from 1 in
    /// order, chained to the line before, signed by one of `trust`.
    ///
    /// Names the first entry that is not, and why. It cannot see entries cut off the end of
    /// the file at a line boundary: compare ``AuditVerification/intact(entries:head:)``'s
    /// count and head with a copy kept elsewhere.
    /// - Throws: ``AuditTrailError`` `notFound` when there is no file, `io` when it cannot be
    ///   read.
    public static func verify(_ path: String, trust: [Ed25519.PublicKey]) throws -> AuditVerification {
        guard let fd = try TrailFile.openForReading(path) else { throw AuditTrailError(.notFound, "\(path) does not exist") }
        defer { close(fd) }
        var keys: [String: Ed25519.PublicKey] = [:]
        for key in trust { keys[key.keyId] = key }
        var lines = TrailLines(fd: fd, path: path)
        var head = AuditLine.noPrevious
        var number = 0
        while let line = try lines.next() {
            number += 1
            let bytes: [UInt8]
            switch line {
            case .whole(let b): bytes = b
            case .unterminated: return .broken(seq: number, reason: "is cut off: the file ends inside it, without a newline (truncated)")
            case .tooLong: return .broken(seq: number, reason: "was changed: its line is longer than \(maxLineBytes) bytes")
            }
            let parsed: AuditLine.Parsed
            do {
                parsed = try AuditLine.parse(bytes)
            } catch {
                return .broken(seq: number, reason: "was changed: \(error.reason)")
            }
            let entry = parsed.entry
            guard let key = keys[entry.keyId] else {
                return .broken(seq: number, reason: "was appended without the key: it is signed by key \(entry.keyId), which is not trusted")
            }
            guard key.isValidSignature(entry.signature, for: parsed.signed) else {
                return .broken(seq: number, reason: "was changed: its signature does not verify")
            }
            guard entry.seq == number else {
                return .broken(seq: number, reason: try misplaced(entry.seq, at: number, rest: &lines))
            }
            guard entry.previous == head else {
                let reason =
                    number == 1
                    ? "does not start the chain: its previous hash is not 64 zeros (entries before it were dropped)"
                    : "does not follow entry \(number - 1): its previous hash is \(entry.previous.prefix(12))…, "
                        + "entry \(number - 1) hashes to \(head.prefix(12))… (an entry was replaced, dropped or inserted)"
                return .broken(seq: number, reason: reason)
            }
            head = AuditLine.hash(bytes)
        }
        return .intact(entries: number, head: head)
    }

    /// Why a line holding `seq` at line `number` is there: a later line holding `number`
    /// means the two were swapped, none means entries were dropped.
    private static func misplaced(_ seq: Int, at number: Int, rest: inout TrailLines) throws -> String {
        if seq > number {
            while let line = try rest.next() {
                guard case .whole(let bytes) = line, let later = try? AuditLine.parse(bytes) else { continue }
                if later.entry.seq == number {
                    return "is out of order: it holds entry \(seq) where entry \(number) belongs, which comes later (reordered)"
                }
            }
            let gap = seq - number == 1 ? "entry \(number) was dropped" : "entries \(number) to \(seq - 1) were dropped"
            return "is missing: the line holds entry \(seq) where entry \(number) belongs (\(gap))"
        }
        return "is out of order: it holds entry \(seq) where entry \(number) belongs (reordered or repeated)"
    }

    /// The record as it is stored: time in whole seconds, each text field at most
    /// ``maxFieldBytes``.
    static func stored(_ record: AuditRecord) -> AuditRecord {
        func clip(_ s: String) -> String { AuditLine.clipped(s, max: maxFieldBytes) }
        return AuditRecord(
            time: Date(timeIntervalSince1970: floor(record.time.timeIntervalSince1970)), operatorName: clip(record.operatorName),
            address: clip(record.address), act: clip(record.act), target: clip(record.target), before: clip(record.before),
            after: clip(record.after), result: clip(record.result))
    }

    /// The last entry's number and line hash (0 and 64 zeros for an empty file).
    /// - Throws: `rejected` when the file does not end with a whole entry.
    private static func lastLine(fd: Int32, size: Int, path: String) throws(AuditTrailError) -> (seq: Int, hash: String) {
        guard size > 0 else { return (0, AuditLine.noPrevious) }
        let count = min(size, maxLineBytes + 2)
        var tail = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = tail.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { pread(fd, $0 + got, count - got, off_t(size - count + got)) } ?? 0
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                throw n == 0 ? AuditTrailError(.io, "\(path) shrank while it was read") : TrailFile.failure("cannot read", path, errno)
            }
            got += n
        }
        let refusal = "\(path) is broken, so nothing is appended to it: run `clientctl audit verify` on it, keep it as evidence and start a new trail"
        guard tail.last == 0x0A else { throw AuditTrailError(.rejected, "its last line is cut off (no newline at its end); \(refusal)") }
        let body = tail.dropLast()
        let line: ArraySlice<UInt8>
        if let newline = body.lastIndex(of: 0x0A) {
            line = body[(newline + 1)...]
        } else if count == size {
            line = body
        } else {
            throw AuditTrailError(.rejected, "its last line is longer than \(maxLineBytes) bytes; \(refusal)")
        }
        do {
            let parsed = try AuditLine.parse(Array(line))
            return (parsed.entry.seq, AuditLine.hash(line))
        } catch {
            throw AuditTrailError(.rejected, "its last entry is not whole (\(error.reason)); \(refusal)")
        }
    }

    /// Writes `bytes` at the end with as few writes as the kernel takes, then fsyncs; on a
    /// failure cuts the file back to `size`, so no half line stays behind.
    private static func write(_ bytes: [UInt8], fd: Int32, size: Int, path: String) throws(AuditTrailError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { buffer in buffer.baseAddress.map { Foundation.write(fd, $0 + done, bytes.count - done) } ?? 0 }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let code = errno
                _ = ftruncate(fd, off_t(size))
                throw TrailFile.failure("cannot append to", path, code)
            }
            done += n
        }
        guard fsync(fd) == 0 else {
            let code = errno
            _ = ftruncate(fd, off_t(size))
            throw TrailFile.failure("cannot fsync", path, code)
        }
    }

    /// Fsyncs the folder holding a trail just created, so the new name survives a crash.
    private static func syncFolder(of path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}

internal import CZstd
import ClientFoundation
import Foundation

/// Patches as zstd frames compressed against a referenced base: the frame's matches may
/// reach back into the base's bytes (zstd's "prefix", the mechanism of `zstd
/// --patch-from`), so content the base already holds costs a few bytes per match. A patch
/// is one ordinary zstd frame: `zstd -d --patch-from=BASE --long=N` reads it too.
///
/// Publish makes patches with long-distance matching and a window that covers base and
/// result together; a device reads the frame header first and refuses a window or a
/// declared size past the caps of ``windowCap(baseSize:resultSize:)`` before libzstd
/// allocates anything (docs/delta-updates.md).
package enum ZstdPatch {
    /// The level publish compresses patches at (docs/delta-updates.md#measurements).
    package static let level: Int32 = 19
    /// The largest window any patch may ask for (1 GiB), whatever the sizes.
    package static let maxWindowLog: Int32 = 30

    /// The window log of a patch from a base of `baseSize` to a result of `resultSize`
    /// bytes: the smallest power of two that holds both (at least 2^10, at most 2^30).
    package static func windowLog(baseSize: Int64, resultSize: Int64) -> Int32 {
        let total = UInt64(max(1, baseSize) + max(1, resultSize))
        var log: Int32 = 10
        while UInt64(1) << UInt64(log) < total, log < maxWindowLog { log += 1 }
        return log
    }

    /// The largest window a device accepts for these sizes: the window publish uses.
    package static func windowCap(baseSize: Int64, resultSize: Int64) -> UInt64 {
        UInt64(1) << UInt64(windowLog(baseSize: baseSize, resultSize: resultSize))
    }

    /// The largest hash and chain tables publish gives the compressor (2^21 and 2^22
    /// entries, 8 and 16 MiB) and the long-distance matcher's table (2^22 entries, 32 MiB,
    /// one entry per 128 bytes: ``ldmHashRateLog``): level 19 with a 1 GiB window would
    /// otherwise take their size from the level and the window (about 150 MiB). Matches
    /// into the base are the long-distance matcher's work; sampling it more sparsely (one
    /// entry per KiB) lost 6 % of a 40 MB base.
    static let hashLogMax: Int32 = 21
    static let chainLogMax: Int32 = 22
    static let ldmHashLog: Int32 = 22
    static let ldmHashRateLog: Int32 = 7

    /// How many bytes a pass over mapped files touches before it unmaps them again
    /// (``MappedFile/release(upTo:)``): what stays resident of base, target, patch and
    /// result is about this much, whatever their sizes.
    static let residentStep = 8 << 20

    /// What ``make(base:target:to:level:cap:)`` wrote.
    package struct Made: Sendable, Equatable {
        /// The patch's length in bytes.
        package var size: Int64
        /// The patch's SHA-256 (lowercase hex).
        package var sha256: String
    }

    /// Makes the patch that turns the file `base` into the file `target`, written to the
    /// new file `output` (not synced: the caller installs it), with bounded memory: base
    /// and target are mapped and read in place, tables are capped (``hashLogMax``), and
    /// the patch goes out through a 1 MiB buffer.
    /// - Parameter cap: the largest base or target accepted, in bytes.
    /// - Throws: ``DeltaError`` `.io`, `.outputTooLarge` (an input over `cap`), `.compressor`.
    package static func make(base: String, target: String, to output: String, level: Int32 = level, cap: Int64) throws(DeltaError)
        -> Made
    {
        let baseFile = try MappedFile(base, cap: cap)
        let targetFile = try MappedFile(target, cap: cap)
        guard let cctx = ZSTD_createCCtx() else { throw DeltaError(.compressor, "libzstd cannot allocate a compression context") }
        defer { ZSTD_freeCCtx(cctx) }
        try configure(cctx, baseSize: Int64(baseFile.count), targetSize: Int64(targetFile.count), level: level)
        try check(ZSTD_CCtx_setParameter(cctx, clientctl_zstd_c_stableInBuffer(), 1), "stable input")
        try check(ZSTD_CCtx_setPledgedSrcSize(cctx, UInt64(targetFile.count)), "pledged size")
        if baseFile.count > 0 {
            try check(ZSTD_CCtx_refPrefix(cctx, baseFile.bytes.baseAddress, baseFile.count), "base \(base)")
        }
        let fd = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw DeltaError(.io, "cannot create \(output): \(String(cString: strerror(errno)))") }
        var finished = false
        defer {
            close(fd)
            if !finished { unlink(output) }
        }
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { out.deallocate() }
        let digest = Digest(.sha256)
        var size: Int64 = 0
        // The input grows by one step per round (stable input may grow), so each round reads
        // a bounded part of the mapped files before they are unmapped again.
        var input = ZSTD_inBuffer(src: targetFile.bytes.baseAddress, size: 0, pos: 0)
        while true {
            input.size = min(targetFile.count, input.pos + residentStep)
            let mode = input.size == targetFile.count ? ZSTD_e_end : ZSTD_e_continue
            var remaining = 1
            repeat {
                var buffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                remaining = ZSTD_compressStream2(cctx, &buffer, &input, mode)
                try check(remaining, "compressing \(target)")
                let written = UnsafeRawBufferPointer(start: out.baseAddress, count: buffer.pos)
                digest.update(written)
                try writeAll(fd, written, output)
                size += Int64(buffer.pos)
            } while (mode == ZSTD_e_end && remaining != 0) || input.pos < input.size
            baseFile.release(upTo: baseFile.count)
            targetFile.release(upTo: input.pos)
            if mode == ZSTD_e_end { break }
        }
        finished = true
        return Made(size: size, sha256: digest.finalizeHex())
    }

    /// What a compression context for a patch is set to (read back from libzstd): the
    /// parameters ``make(base:target:to:level:cap:)`` compresses with for these sizes.
    package struct Settings: Sendable, Equatable {
        package var windowLog: Int32
        package var hashLog: Int32
        package var chainLog: Int32
        package var longDistanceMatching: Bool
        package var ldmHashLog: Int32
        package var ldmHashRateLog: Int32
    }

    /// The parameters a patch from a `baseSize`-byte base to a `targetSize`-byte target is
    /// made with, as libzstd holds them after ``make(base:target:to:level:cap:)`` set them.
    package static func settings(baseSize: Int64, targetSize: Int64, level: Int32 = level) throws(DeltaError) -> Settings {
        guard let cctx = ZSTD_createCCtx() else { throw DeltaError(.compressor, "libzstd cannot allocate a compression context") }
        defer { ZSTD_freeCCtx(cctx) }
        try configure(cctx, baseSize: baseSize, targetSize: targetSize, level: level)
        func read(_ parameter: ZSTD_cParameter) throws(DeltaError) -> Int32 {
            var value: Int32 = 0
            try check(ZSTD_CCtx_getParameter(cctx, parameter, &value), "reading parameter \(parameter.rawValue)")
            return value
        }
        return Settings(
            windowLog: try read(ZSTD_c_windowLog), hashLog: try read(ZSTD_c_hashLog), chainLog: try read(ZSTD_c_chainLog),
            longDistanceMatching: try read(ZSTD_c_enableLongDistanceMatching) == 1, ldmHashLog: try read(ZSTD_c_ldmHashLog),
            ldmHashRateLog: try read(ZSTD_c_ldmHashRateLog))
    }

    /// Sets level, window, capped tables, long-distance matching, checksum and content size.
    /// The sampling rate is always set: left at 0, libzstd derives it as window log minus
    /// table log (one entry per KiB for a 1 GiB window and a 2^20 table: a 128-byte change
    /// in a 300 MB tree cost 2.1 MB instead of 27 kB).
    private static func configure(_ cctx: OpaquePointer, baseSize: Int64, targetSize: Int64, level: Int32) throws(DeltaError) {
        let log = windowLog(baseSize: baseSize, resultSize: targetSize)
        try check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level), "level \(level)")
        try check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, log), "window log \(log)")
        let levelParameters = ZSTD_getCParams(level, UInt64(max(targetSize, 0)), Int(max(baseSize, 0)))
        try check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, min(Int32(levelParameters.hashLog), hashLogMax)), "hash log")
        try check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_chainLog, min(Int32(levelParameters.chainLog), chainLogMax)), "chain log")
        try check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, 1), "long-distance matching")
        try check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_ldmHashLog, min(ldmHashLog, log)), "long-distance hash log")
        try check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_ldmHashRateLog, ldmHashRateLog), "long-distance hash rate")
        try check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1), "checksum")
        try check(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1), "content size")
    }

    /// Applies the patch in file `patch` to the file `base`, writing the result to a new
    /// file `output`, and returns the result's SHA-256 (lowercase hex). `output` is not
    /// synced: it is a work file the caller unpacks, and a crash discards it.
    ///
    /// The frame header is checked first: one zstd frame without a dictionary id that
    /// declares exactly `resultSize` bytes and a window within
    /// ``windowCap(baseSize:resultSize:)``. The result is counted as it is written and
    /// refused past `resultSize`; `output` is removed on any failure.
    ///
    /// Memory does not grow with the release: `output` is created at `resultSize` bytes
    /// (disk space reserved first) and mapped, and the decoder writes into it and reads its
    /// back-references from it and from the mapped base, so it needs no window buffer of
    /// its own. The patch is fed a few hundred bytes at a time, so one step produces at
    /// most a few MiB, and every ``residentStep`` bytes of output the mapped pages are
    /// released from the process (they stay in the page cache).
    /// - Throws: ``DeltaError`` `.malformedPatch`, `.windowTooLarge`, `.outputTooLarge`, `.io`.
    package static func apply(patch: String, base: String, to output: String, resultSize: Int64) throws(DeltaError) -> String {
        let patchFile = try MappedFile(patch, cap: max(resultSize, 0) + (1 << 20) + resultSize / 8)
        guard let header = PatchFrameHeader.parse(patchFile.bytes) else {
            throw DeltaError(.malformedPatch, "\(patch) does not start with a zstd frame header")
        }
        guard header.dictionaryID == 0 else {
            throw DeltaError(.malformedPatch, "\(patch) names dictionary \(header.dictionaryID); patches reference their base only")
        }
        guard let declared = header.contentSize else {
            throw DeltaError(.malformedPatch, "\(patch) does not declare its decompressed size")
        }
        guard declared <= UInt64(max(resultSize, 0)) else {
            throw DeltaError(.outputTooLarge, "\(patch) declares \(declared) bytes, more than the signed \(resultSize)")
        }
        guard declared == UInt64(resultSize) else {
            throw DeltaError(.malformedPatch, "\(patch) declares \(declared) bytes, not the signed \(resultSize)")
        }
        let baseFile = try MappedFile(base, cap: Int64.max)
        let cap = windowCap(baseSize: Int64(baseFile.count), resultSize: resultSize)
        guard header.windowSize <= cap else {
            throw DeltaError(
                .windowTooLarge,
                "\(patch) asks for a \(header.windowSize)-byte window; at most \(cap) for a \(baseFile.count)-byte base and a \(resultSize)-byte result"
            )
        }
        guard let dctx = ZSTD_createDCtx() else { throw DeltaError(.io, "libzstd cannot allocate a decompression context") }
        defer { ZSTD_freeDCtx(dctx) }
        let log = windowLog(baseSize: Int64(baseFile.count), resultSize: resultSize)
        try check(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, log), "window limit", code: .malformedPatch)
        try check(ZSTD_DCtx_setParameter(dctx, clientctl_zstd_d_stableOutBuffer(), 1), "stable output", code: .malformedPatch)
        if baseFile.count > 0 {
            try check(ZSTD_DCtx_refPrefix(dctx, baseFile.bytes.baseAddress, baseFile.count), "base \(base)", code: .malformedPatch)
        }
        let outputFile = try MappedFile(creating: output, size: resultSize)
        var finished = false
        defer { if !finished { unlink(output) } }
        let digest = Digest(.sha256)
        // A zstd block is at most 128 KiB of output and at least 4 bytes of input (an RLE
        // block), so `feed` bytes of patch produce at most (feed / 4 + 1) × 128 KiB: 8 MiB.
        let feed = 256
        let empty = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 16)  // an empty result maps nothing
        defer { empty.deallocate() }
        let target = outputFile.mutableBytes.baseAddress ?? empty
        var out = ZSTD_outBuffer(dst: target, size: outputFile.count, pos: 0)
        var input = ZSTD_inBuffer(src: patchFile.bytes.baseAddress, size: 0, pos: 0)
        var sinceRelease = 0
        while true {
            input.size = min(patchFile.count, input.pos + feed)
            let before = out.pos
            let remaining = ZSTD_decompressStream(dctx, &out, &input)
            if ZSTD_isError(remaining) != 0 {
                if clientctl_zstd_isDstTooSmall(remaining) != 0 {
                    throw DeltaError(.outputTooLarge, "\(patch) expands past the signed \(resultSize) bytes")
                }
                throw DeltaError(.malformedPatch, "\(patch) is corrupt: \(String(cString: ZSTD_getErrorName(remaining)))")
            }
            digest.update(UnsafeRawBufferPointer(start: target + before, count: out.pos - before))
            sinceRelease += out.pos - before
            if sinceRelease >= residentStep {
                baseFile.release(upTo: baseFile.count)
                outputFile.release(upTo: out.pos)
                patchFile.release(upTo: input.pos)
                sinceRelease = 0
            }
            if remaining == 0 { break }
            if input.pos == patchFile.count, out.pos == before {
                throw DeltaError(.malformedPatch, "\(patch) is truncated: the frame does not end")
            }
        }
        guard input.pos == patchFile.count else {
            throw DeltaError(.malformedPatch, "\(patch) has \(patchFile.count - input.pos) bytes after its frame")
        }
        guard out.pos == resultSize else {
            throw DeltaError(.malformedPatch, "\(patch) produced \(out.pos) bytes, not the signed \(resultSize)")
        }
        finished = true
        return digest.finalizeHex()
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, _ path: String) throws(DeltaError) {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw DeltaError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    private static func check(_ result: Int, _ what: String, code: DeltaError.Code = .compressor) throws(DeltaError) {
        if ZSTD_isError(result) != 0 {
            throw DeltaError(code, "libzstd refused \(what): \(String(cString: ZSTD_getErrorName(result)))")
        }
    }
}

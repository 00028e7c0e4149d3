import ClientFoundation
import ClientUpdater
import DeltaPatch
import Foundation
import TestSupport
import Testing

/// Patches made and applied by ``ZstdPatch``, checked against the real `zstd` command
/// (a patch is an ordinary zstd frame: `zstd -d --patch-from=BASE --long=N` reads it, see
/// zstd's programs/zstd.1.md, "--patch-from") and against frames written by hand from
/// RFC 8878 §3.1.1 to make the claims a hostile patch could make.
@Suite struct ZstdPatchTests {
    func write(_ data: Data, _ path: String) throws { try data.write(to: URL(fileURLWithPath: path)) }

    @Test func aPatchTurnsTheBaseIntoTheTargetAndTheZstdCommandAgrees() async throws {
        let dir = try TemporaryDirectory("zstd-patch")
        var base = SyntheticCode.content(seed: 1, count: 600_000)
        var target = base
        target.replaceSubrange(200_000..<200_100, with: SyntheticCode.content(seed: 2, count: 300))
        target.append(SyntheticCode.content(seed: 3, count: 20_000))
        base.append(SyntheticCode.content(seed: 4, count: 1000))
        try write(base, dir("base"))
        try write(target, dir("target"))
        let made = try ZstdPatch.make(base: dir("base"), target: dir("target"), to: dir("patch.zst"), cap: 1 << 30)
        #expect(made.size < 12_000, "a 320-byte change and a 20 kB tail cost \(made.size) bytes against a 600 kB base")
        #expect(try Digest.hex(.sha256, ofFileAt: dir("patch.zst")) == made.sha256)

        let sha = try ZstdPatch.apply(patch: dir("patch.zst"), base: dir("base"), to: dir("out"), resultSize: Int64(target.count))
        #expect(sha == Digest.hex(.sha256, of: target))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir("out"))) == target)

        let log = ZstdPatch.windowLog(baseSize: Int64(base.count), resultSize: Int64(target.count))
        let zstd = try await Subprocess.run(
            "zstd", ["-q", "-d", "--patch-from=\(dir("base"))", "--long=\(log)", dir("patch.zst"), "-o", dir("by-zstd")])
        #expect(zstd.status == 0, "\(zstd.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir("by-zstd"))) == target)
    }

    /// A frame header claiming a 4 GiB window, then nothing: refused from the header, with
    /// no context or window allocated.
    /// A 300 MB release: the window covers base and target (2^30), the tables stay capped,
    /// and the long-distance matcher samples one entry per 128 bytes. Left unset, libzstd
    /// derives the rate from window and table (one per KiB with the earlier 2^20 table: a
    /// 128-byte change in a 300 MB tree cost 2.1 MB; with the rate set, 27 kB, as
    /// BENCHMARKS.md#delta-updates-of-big-releases measures). Sizes only: nothing is compressed.
    @Test(arguments: [Int64(1) << 20, 40_000_000, 314_736_640, 600_000_000])
    func patchesOfBigReleasesSampleTheBaseDensely(size: Int64) throws {
        let settings = try ZstdPatch.settings(baseSize: size, targetSize: size)
        #expect(settings.windowLog == ZstdPatch.windowLog(baseSize: size, resultSize: size))
        #expect(Int64(1) << Int64(settings.windowLog) >= min(2 * size, Int64(1) << 30))
        #expect(settings.longDistanceMatching)
        #expect((1...7).contains(settings.ldmHashRateLog), "one long-distance entry per \(1 << settings.ldmHashRateLog) bytes")
        #expect(settings.ldmHashLog >= min(22, settings.windowLog))
        #expect(settings.hashLog <= 21 && settings.chainLog <= 22, "tables capped: \(settings)")
    }

    @Test func aClaimedHugeWindowIsRefusedBeforeAllocation() throws {
        let dir = try TemporaryDirectory("zstd-window")
        try write(SyntheticCode.content(seed: 5, count: 10_000), dir("base"))
        // Descriptor 0xC0: 8-byte content size, not single-segment; window descriptor
        // exponent 22 → 2^(10+22) = 4 GiB (RFC 8878 §3.1.1.1.2).
        var frame = Data(PatchFrameHeader.magic + [0xC0, 22 << 3])
        withUnsafeBytes(of: UInt64(1000).littleEndian) { frame.append(contentsOf: $0) }
        frame.append(contentsOf: [0x01, 0x00, 0x00])  // a raw last block header, cut short
        try write(frame, dir("patch"))
        #expect(PatchFrameHeader.parse(frame)?.windowSize == 1 << 32)
        let error = #expect(throws: DeltaError.self) {
            try ZstdPatch.apply(patch: dir("patch"), base: dir("base"), to: dir("out"), resultSize: 1000)
        }
        #expect(error?.code == .windowTooLarge)
        #expect(error?.message.contains("asks for a 4294967296-byte window; at most 16384") == true, "\(error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: dir("out")))
    }

    /// Size claims: more than the signed size, a frame without a declared size (`zstd
    /// --no-content-size`), bytes after the frame, a cut frame, and not zstd at all.
    @Test func sizeClaimsAndBrokenFramesAreRefused() async throws {
        let dir = try TemporaryDirectory("zstd-sizes")
        let base = SyntheticCode.content(seed: 6, count: 50_000)
        let target = base + SyntheticCode.content(seed: 7, count: 5_000)
        try write(base, dir("base"))
        try write(target, dir("target"))
        _ = try ZstdPatch.make(base: dir("base"), target: dir("target"), to: dir("good"), cap: 1 << 30)
        let patch = try Data(contentsOf: URL(fileURLWithPath: dir("good")))
        let n = Int64(target.count)

        func refusal(_ file: String, resultSize: Int64) -> DeltaError? {
            unlink(dir("out"))
            return #expect(throws: DeltaError.self) {
                try ZstdPatch.apply(patch: dir(file), base: dir("base"), to: dir("out"), resultSize: resultSize)
            }
        }
        #expect(refusal("good", resultSize: n - 1)?.code == .outputTooLarge)
        #expect(refusal("good", resultSize: n + 1)?.code == .malformedPatch)

        let plain = try await Subprocess.run("zstd", ["-q", "--no-content-size", "-c", dir("target"), "-o", dir("no-size")])
        #expect(plain.status == 0, "\(plain.errorOutput)")
        #expect(refusal("no-size", resultSize: n)?.message.hasSuffix("does not declare its decompressed size") == true)

        try write(patch + Data([0]), dir("trailing"))
        #expect(refusal("trailing", resultSize: n)?.code == .malformedPatch)
        try write(patch.prefix(patch.count - 6), dir("cut"))
        #expect(refusal("cut", resultSize: n)?.code == .malformedPatch)
        try write(Data("not a patch at all".utf8), dir("text"))
        #expect(refusal("text", resultSize: n)?.message.hasSuffix("does not start with a zstd frame header") == true)
        #expect(!FileManager.default.fileExists(atPath: dir("out")), "a refused patch leaves no output")

        // Another base: the frame decodes to other bytes or fails its checksum; never the target.
        try write(SyntheticCode.content(seed: 8, count: 50_000), dir("other-base"))
        let other = try? ZstdPatch.apply(patch: dir("good"), base: dir("other-base"), to: dir("other"), resultSize: n)
        #expect(other != Digest.hex(.sha256, of: target))
    }

    /// A file a release empties: the patch to 0 bytes, made by publish and written by hand
    /// (the fuzzer's find: descriptor 0xA1 = 4-byte content size 0, single segment, a 1-byte
    /// dictionary id 0; then a raw last block of 0 bytes, RFC 8878 §3.1.1.2), applies to an
    /// empty file with the empty SHA-256, and the zstd command reads the same bytes.
    @Test func aPatchToAnEmptyFileGivesAnEmptyFile() async throws {
        let dir = try TemporaryDirectory("zstd-empty")
        try write(SyntheticCode.content(seed: 9, count: 8_192), dir("base"))
        try write(Data(), dir("empty"))
        let emptySHA = Digest.hex(.sha256, of: Data())
        _ = try ZstdPatch.make(base: dir("base"), target: dir("empty"), to: dir("made"), cap: 1 << 30)
        try write(Data(PatchFrameHeader.magic + [0xA1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00]), dir("by-hand"))
        for patch in ["made", "by-hand"] {
            unlink(dir("out"))
            #expect(try ZstdPatch.apply(patch: dir(patch), base: dir("base"), to: dir("out"), resultSize: 0) == emptySHA)
            #expect(try FileManager.default.attributesOfItem(atPath: dir("out"))[.size] as? Int == 0, "\(patch)")
            #expect(refusesASize(patch, dir) == .malformedPatch, "\(patch) declares 0 bytes, not a signed 1")
        }
        let zstd = try await Subprocess.run("zstd", ["-q", "-d", "--patch-from=\(dir("base"))", dir("by-hand"), "-o", dir("by-zstd")])
        #expect(zstd.status == 0, "\(zstd.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir("by-zstd"))).isEmpty)
    }

    func refusesASize(_ patch: String, _ dir: TemporaryDirectory) -> DeltaError.Code? {
        unlink(dir("out"))
        let error = #expect(throws: DeltaError.self) {
            try ZstdPatch.apply(patch: dir(patch), base: dir("base"), to: dir("out"), resultSize: 1)
        }
        return error?.code
    }

    /// Header fields as RFC 8878 §3.1.1.1 lays them out.
    @Test(arguments: [
        // single segment, 1-byte size: the window is the content size
        ([0x20, 0x64] as [UInt8], PatchFrameHeader(windowSize: 100, contentSize: 100, dictionaryID: 0, hasChecksum: false)),
        // 2-byte size is offset by 256; window 2^10 + 3/8; checksum bit
        ([0x44, 0x03, 0x00, 0x01], PatchFrameHeader(windowSize: 1024 + 384, contentSize: 512, dictionaryID: 0, hasChecksum: true)),
        // a 1-byte dictionary id, no size
        ([0x01, 0x00, 0x07], PatchFrameHeader(windowSize: 1024, contentSize: nil, dictionaryID: 7, hasChecksum: false)),
    ])
    func headerFields(_ bytes: [UInt8], _ expected: PatchFrameHeader) {
        #expect(PatchFrameHeader.parse(PatchFrameHeader.magic + bytes) == expected)
    }

    @Test func headersThatAreNotPatchFramesAreNotRead() {
        #expect(PatchFrameHeader.parse(PatchFrameHeader.magic + [0x28, 0x00]) == nil, "reserved bit set")
        #expect(PatchFrameHeader.parse([0x50, 0x2A, 0x4D, 0x18, 0, 0, 0, 0]) == nil, "a skippable frame")
        #expect(PatchFrameHeader.parse(PatchFrameHeader.magic + [0x20]) == nil, "single segment without its size")
        #expect(PatchFrameHeader.parse(PatchFrameHeader.magic + [0xC0, 0x00, 1, 2]) == nil, "size field cut short")
    }
}

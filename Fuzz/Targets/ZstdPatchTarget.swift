import ClientUpdater
import DeltaPatch
import Foundation

/// A delta patch as a device applies it (docs/delta-updates.md#caps-on-patches). Input: the
/// patch bytes, applied to a fixed 8 KiB base with the result size the frame claims (when
/// it claims one up to 64 KiB, else 4 KiB, as a signed size would differ). Properties: a
/// frame whose header asks for more than the cap, carries a dictionary or no content size
/// is refused; an accepted patch produced exactly the signed size, its returned hash is
/// the file's SHA-256; a refused one leaves no output file.
enum ZstdPatchTarget: FuzzTarget {
    static let name = "zstd-patch"
    nonisolated(unsafe) static var work = ""
    static var base: String { work + "/base" }

    static func setUp() {
        let tmp = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        work = "\(tmp)/clientctl-fuzz-patch-\(getpid())"
        try? FileManager.default.removeItem(atPath: work)
        var text = ""
        var i = 0
        while text.utf8.count < 8192 {
            text += "export function f\(i)(value) { return value * \(i % 7) + \"chunk-\(i % 13)\"; }\n"
            i += 1
        }
        guard (try? FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)) != nil,
            FileManager.default.createFile(atPath: base, contents: Data(text.utf8.prefix(8192)))
        else { FuzzFinding.fail(name, "cannot create \(work)") }
        atexit { try? FileManager.default.removeItem(atPath: ZstdPatchTarget.work) }
    }

    static func run(_ data: [UInt8]) {
        let patch = work + "/patch"
        let output = work + "/out"
        unlink(output)
        guard FileManager.default.createFile(atPath: patch, contents: Data(data)) else { FuzzFinding.fail(name, "cannot write the input") }
        let header = PatchFrameHeader.parse(data)
        let claimed = header?.contentSize.map { Int64(clamping: $0) }
        let resultSize = claimed.flatMap { $0 <= 65_536 ? $0 : nil } ?? 4096
        let outcome = Result { () throws(DeltaError) in try ZstdPatch.apply(patch: patch, base: base, to: output, resultSize: resultSize) }
        switch outcome {
        case .success(let hash):
            guard let header else { FuzzFinding.fail(name, "accepted a patch without a readable frame header") }
            let cap = ZstdPatch.windowCap(baseSize: 8192, resultSize: resultSize)
            guard header.windowSize <= cap, header.dictionaryID == 0, header.contentSize == UInt64(resultSize) else {
                FuzzFinding.fail(name, "accepted header \(header) for a \(resultSize)-byte result (cap \(cap))")
            }
            guard let bytes = readWhole(output), Int64(bytes.count) == resultSize else {
                FuzzFinding.fail(name, "accepted, but the output is not \(resultSize) bytes")
            }
            guard Digest.hex(.sha256, of: bytes) == hash else { FuzzFinding.fail(name, "returned hash is not the output's SHA-256") }
        case .failure:
            guard !FileManager.default.fileExists(atPath: output) else { FuzzFinding.fail(name, "a refused patch left its output") }
        }
    }

    /// The file's bytes, read with read(2). Not `FileManager.contents(atPath:)`: on Linux,
    /// swift-foundation reads a file that reports size 0 into a 4 KiB malloc'd chunk and
    /// loses that chunk when nothing was read (its zero-size path in Data+Reading.swift;
    /// LeakSanitizer's report is Fuzz/Regressions/zstd-patch/empty-result-frame). A patch
    /// whose frame declares 0 bytes is valid, so this harness reads empty outputs.
    static func readWhole(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }
}

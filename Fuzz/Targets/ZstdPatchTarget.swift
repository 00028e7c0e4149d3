import ClientFoundation
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
            // BoundedFile reads with read(2): FileManager's read of an empty output leaked
            // (Fuzz/Regressions/zstd-patch/empty-result-frame, FUZZING.md).
            guard let bytes = try? BoundedFile.read(output, cap: Int(resultSize), code: DeltaError.Code.io), Int64(bytes.count) == resultSize else {
                FuzzFinding.fail(name, "accepted, but the output is not \(resultSize) bytes")
            }
            guard Digest.hex(.sha256, of: [UInt8](bytes)) == hash else { FuzzFinding.fail(name, "returned hash is not the output's SHA-256") }
        case .failure:
            guard !FileManager.default.fileExists(atPath: output) else { FuzzFinding.fail(name, "a refused patch left its output") }
        }
    }
}

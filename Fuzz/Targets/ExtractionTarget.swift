import Foundation

@testable import SafeArchive
@testable import SignedManifest

/// The tar/zip/gzip/zstd reading around libarchive. An archive is either refused with a
/// typed ``SignedManifestError`` (and the staging folder is gone) or it yields a tree that
/// satisfies the entry rule as seen from the file system itself: only regular files and
/// directories, modes 0644/0755 (no setuid, no links), names within the rule, bytes within
/// the caps, `index.html` a regular file at the root; and nothing is ever written beside
/// the staging folder: staging sits eight folders deep in a sandbox of this process's own,
/// and every folder on the way must hold nothing but the way down (a `../` escape of any
/// depth up to eight lands in one of them).
enum ExtractionTarget: FuzzTarget {
    static let name = "extract"
    nonisolated(unsafe) static var sandbox = ""
    static let depth = 8
    static var work: String { sandbox + String(repeating: "/d", count: depth) }
    static let limits = ExtractionLimits(maxTotalBytes: 8 << 20, maxEntries: 2_000)

    static func setUp() {
        // tmpfs keeps the extractor's syncfs/fsync cheap; the folder is this process's own.
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        sandbox = "\(base)/clientctl-fuzz-extract-\(getpid())"
        try? FileManager.default.removeItem(atPath: sandbox)
        guard (try? FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)) != nil else {
            FuzzFinding.fail(name, "cannot create \(work)")
        }
        atexit { try? FileManager.default.removeItem(atPath: ExtractionTarget.sandbox) }
    }

    static func run(_ data: [UInt8]) {
        let archive = "\(work)/archive"
        let staging = "\(work)/staging"
        guard FileManager.default.createFile(atPath: archive, contents: Data(data)) else {
            FuzzFinding.fail(name, "cannot write the input")
        }
        let fd = open(archive, O_RDONLY)
        guard fd >= 0 else { FuzzFinding.fail(name, "cannot open the input") }
        defer { close(fd) }
        let outcome = Result { () throws(SafeArchiveError) in
            try SafeExtractor(limits: limits).extract(fileDescriptor: fd, into: staging)
        }
        var level = sandbox
        for _ in 0..<depth {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: level)) ?? []
            guard names == ["d"] else { FuzzFinding.fail(name, "wrote outside the staging folder: \(level): \(names.sorted())") }
            level += "/d"
        }
        let beside = (try? FileManager.default.contentsOfDirectory(atPath: work)) ?? []
        guard Set(beside).isSubset(of: ["archive", "staging"]) else {
            FuzzFinding.fail(name, "wrote beside the staging folder: \(beside.sorted())")
        }
        switch outcome {
        case .failure:
            if FileManager.default.fileExists(atPath: staging) {
                FuzzFinding.fail(name, "a refused archive left its staging folder behind")
            }
        case .success(let report):
            TreeCheck(target: name, limits: limits).check(staging, report: report)
            try? FileManager.default.removeItem(atPath: staging)
        }
        unlink(archive)
    }
}

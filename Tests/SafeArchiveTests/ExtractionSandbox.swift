import ClientFoundation
import ClientUpdater
import Foundation
import SafeArchive
import SignedManifest
import TestSupport
import Testing

/// A temp folder laid out like a device root around one extraction: the archive file,
/// `clients/` (the staging folder's parent) with an installed version in it, and a file
/// beside them. Snapshots of the whole folder prove what an extraction did or did not write.
struct ExtractionSandbox {
    let tmp: TemporaryDirectory
    var archive: String { tmp("archive.bin") }
    var clients: String { tmp("clients") }
    var staging: String { tmp("clients/.staging-test") }

    init() throws {
        tmp = try TemporaryDirectory("unpack")
        try FileManager.default.createDirectory(atPath: tmp("clients/v1.0.0"), withIntermediateDirectories: true)
        try Data("<html>v1</html>".utf8).write(to: URL(fileURLWithPath: tmp("clients/v1.0.0/index.html")))
        try Data("outside".utf8).write(to: URL(fileURLWithPath: tmp("outside.txt")))
    }

    /// Extracts `bytes` (written to `archive.bin`) from an open descriptor into `staging`.
    func extract(_ bytes: [UInt8], limits: ExtractionLimits = .default) throws -> ExtractionReport {
        try Data(bytes).write(to: URL(fileURLWithPath: archive))
        return try extractFile(archive, limits: limits)
    }

    /// Extracts the archive at `path` through a descriptor opened here.
    func extractFile(_ path: String, limits: ExtractionLimits = .default) throws -> ExtractionReport {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(.ENOENT) }
        defer { close(fd) }
        return try SafeExtractor(limits: limits).extract(fileDescriptor: fd, into: staging)
    }

    /// Every path under the sandbox with its type, mode and content digest.
    func snapshot() -> [String: String] { Self.snapshot(tmp.path) }

    static func snapshot(_ root: String) -> [String: String] {
        var result: [String: String] = [:]
        let paths = (try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? []
        for path in paths {
            var info = stat()
            guard lstat(root + "/" + path, &info) == 0 else { continue }
            let mode = String(info.st_mode, radix: 8)
            if info.st_mode & S_IFMT == S_IFREG {
                let data = FileManager.default.contents(atPath: root + "/" + path) ?? Data()
                result[path] = "file \(mode) \(data.count) \(Digest.hex(.sha256, of: data))"
            } else {
                result[path] = "other \(mode)"
            }
        }
        return result
    }

    /// Expects `bytes` to be refused with exactly `message` and a refusal's code (`code`
    /// when given), the sandbox unchanged apart from the archive file, and no staging
    /// folder left.
    func expectRejected(
        _ bytes: [UInt8], _ message: String, code: SafeArchiveError.Code? = nil, limits: ExtractionLimits = .default,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: archive))
        expectArchiveRejected(message, code: code, limits: limits, sourceLocation: sourceLocation)
    }

    /// ``expectRejected(_:_:code:limits:sourceLocation:)`` for the archive already at `archive.bin`.
    func expectArchiveRejected(
        _ message: String, code: SafeArchiveError.Code? = nil, limits: ExtractionLimits = .default,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let before = snapshot()
        let error = #expect(throws: SafeArchiveError.self, sourceLocation: sourceLocation) {
            try extractFile(archive, limits: limits)
        }
        #expect(error?.message == message, sourceLocation: sourceLocation)
        if let code {
            #expect(error?.code == code, sourceLocation: sourceLocation)
        } else {
            let refusals: [SafeArchiveError.Code] = [.archiveRejected, .archiveLimit, .archiveFailed]
            #expect(error.map { refusals.contains($0.code) } == true, "\(String(describing: error?.code))", sourceLocation: sourceLocation)
        }
        #expect(error?.kind == .dataError, sourceLocation: sourceLocation)
        #expect(snapshot() == before, sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: staging), sourceLocation: sourceLocation)
    }
}

/// Shorthands for building hostile archives.
enum Build {
    static let index = HostileArchive.TarEntry.file("index.html", "<html>ok</html>")

    static func tarGz(_ entries: [HostileArchive.TarEntry], endMarker: Bool = true) -> [UInt8] {
        HostileArchive.gzip(HostileArchive.tar(entries, endMarker: endMarker))
    }
}

import ArchivePublishing
import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import TestSupport
import Testing

/// Memory of the patch path (docs/delta-updates.md#caps-on-patches): applying a patch to a
/// big release must not hold the release in memory. The real binary installs the same
/// update through the patch and through the archive under GNU time; the patch install's
/// peak RSS stays within a few MiB steps of the archive install's, whatever the size.
@Suite struct DeltaMemoryTests {
    static let fileCount = 48  // 1 MiB each: a 48 MiB release

    /// A client of incompressible files, or a copy of `base` with `rewritten` files changed.
    static func client(at path: String, from base: String?, rewritten: [Int]) throws {
        if let base {
            try FileManager.default.copyItem(atPath: base, toPath: path)
        } else {
            try FileManager.default.createDirectory(atPath: path + "/assets", withIntermediateDirectories: true)
            try Data("<!doctype html><title>big</title>\n".utf8).write(to: URL(fileURLWithPath: path + "/index.html"))
        }
        var generator = SystemRandomNumberGenerator()
        for k in base == nil ? Array(0..<fileCount) : rewritten {
            let file = URL(fileURLWithPath: path + "/assets/f\(k).bin")
            // A new file is 1 MiB of random bytes; a rewritten one gets 64 new bytes, so the
            // patch (not the file list, which would download whole files) is the cheapest path.
            var words = base == nil ? [] : try Data(contentsOf: file).withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) }
            if words.isEmpty { words = (0..<(1 << 17)).map { _ in generator.next() } }
            for i in 1000..<1008 { words[i] = generator.next() }
            try words.withUnsafeBytes { try Data($0).write(to: file) }
        }
    }

    /// Peak RSS in bytes of `clientctl install --root root extra…`, from GNU time.
    ///
    /// glibc's malloc arenas are capped at two (`MALLOC_ARENA_MAX`, glibc's own tunable): on a
    /// loaded machine more threads contend, each may get an arena of its own, and the peak
    /// then measures the load, not the install.
    static func peakRSS(_ root: String, _ extra: [String]) async throws -> (Int64, String) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            throw HarnessError("/usr/bin/time is missing: Scripts/test installs GNU time (apt-get install time)")
        }
        let run = try await Subprocess.run(
            "/usr/bin/time", ["-f", "%M", ClientctlBinary.path, "install", "--root", root] + extra, environment: ["MALLOC_ARENA_MAX": "2"])
        #expect(run.status == 0, "\(run.errorOutput)")
        let lines = run.errorOutput.split(separator: "\n")
        let kib = Int64(lines.last.map(String.init) ?? "") ?? 0
        return (kib * 1024, lines.dropLast().joined(separator: "\n"))
    }

    @Test func aPatchInstallPeaksNearTheArchiveInstall() async throws {
        let d = try DeviceFixture()
        try Self.client(at: d.tmp("src-1.0.0"), from: nil, rewritten: [])
        try Self.client(at: d.tmp("src-1.1.0"), from: d.tmp("src-1.0.0"), rewritten: [5, 30])
        for version in ["1.0.0", "1.1.0"] {
            let request = PublishRequest(
                source: d.tmp("src-\(version)"), app: "com.example.notes", channel: "stable",
                version: Version(version) ?? Version(0, 0, 0), minShellVersion: Version(1, 0, 0), outputDirectory: d.tmp("releases"))
            let result = try await onOwnThread { try await Publisher.publish(request, key: try ReleaseFolder.testKey()) }
            if version == "1.0.0" { _ = try await d.updater().install() }
            if version == "1.1.0" { #expect(result.deltaCosts.first?.patchBytes != nil, "\(result.deltaCosts)") }
        }
        // Each way twice, on fresh copies of the root, keeping the lower peak: what another
        // test does at the same moment only ever adds to a peak.
        let copy = d.tmp("device-copy")
        var viaPatch = Int64.max
        var viaArchive = Int64.max
        for run in 0..<2 {
            for (path, extra) in [(d.tmp("patch-\(run)"), [String]()), (run == 0 ? copy : d.tmp("archive-\(run)"), ["--no-delta"])] {
                try FileManager.default.copyItem(atPath: d.layout.root, toPath: path)
                let (peak, notes) = try await Self.peakRSS(path, extra)
                if extra.isEmpty {
                    #expect(notes.contains("patch from 1.0.0"), "\(notes)")
                    viaPatch = min(viaPatch, peak)
                } else {
                    viaArchive = min(viaArchive, peak)
                }
            }
        }
        let mib: Int64 = 1 << 20
        // Before: the decoder's window held the whole 48 MiB result, beside the mapped base.
        #expect(
            viaPatch <= viaArchive + 32 * mib,
            "patch install peaked at \(viaPatch / mib) MiB, the archive install at \(viaArchive / mib) MiB")
        #expect(try TreeSnapshot(copy + "/clients/v1.1.0") == (try TreeSnapshot(d.tmp("patch-0") + "/clients/v1.1.0")))
    }
}

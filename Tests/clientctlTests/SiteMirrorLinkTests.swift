import Foundation
import TestSupport
import Testing

/// `clientctl mirror --to DIR` and the symbolic links in DIR (docs/site-mirror.md#the-folder):
/// the real binary against the origin `SiteMirrorTests.Site` serves.
@Suite struct SiteMirrorLinkTests {
    /// A symbolic link inside the mirror's folder is refused before anything is written:
    /// `DIR/stable` linked to a folder elsewhere (the run would write there), then a real
    /// channel folder whose `objects/` is such a link (its prune would delete there). Each
    /// time one line names the link and why, exit 73, and neither the folder nor where the
    /// link points changes (issue 75).
    @Test func aLinkInsideTheFolderIsRefusedAndNothingIsWrittenOrPrunedThroughIt() async throws {
        let site = try SiteMirrorTests.Site()
        try await site.publish("1.0.0", bases: 0)
        let outside = site.tmp("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        // Named as an object the mirror would prune: 64 lowercase hex digits.
        try Data("not the mirror's".utf8).write(to: URL(fileURLWithPath: outside + "/" + String(repeating: "ab", count: 32)))
        let elsewhere = try TreeSnapshot(outside, ignoring: [])
        try FileManager.default.createDirectory(atPath: site.mirror, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: site.mirror + "/stable", withDestinationPath: outside)
        for link in ["stable", "stable/objects"] {
            if link == "stable/objects" {
                try FileManager.default.removeItem(atPath: site.mirror + "/stable")
                #expect(try await site.mirrorRun().0.status == 0)
                try FileManager.default.createSymbolicLink(atPath: site.mirror + "/" + link, withDestinationPath: outside)
            }
            let before = try site.snapshot()
            let (refused, _) = try await site.mirrorRun()
            #expect(refused.status == 73, "\(link): \(refused.errorOutput)")
            let why = "the mirror writes and prunes only the folder's own files and folders, never through a link; remove it (nothing was written)"
            #expect(
                refused.errorOutput == "clientctl: \(site.mirror)/\(link) is a symbolic link inside the mirror's folder \(site.mirror): \(why)\n",
                "\(refused.errorOutput)")
            #expect(try TreeSnapshot(outside, ignoring: []) == elsewhere, "\(link): nothing written or pruned where it points")
            #expect(try site.snapshot() == before, "\(link): the mirror's folder as it was")
        }
    }
}

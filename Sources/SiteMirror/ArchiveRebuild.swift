import ClientFoundation
import DeltaPatch
import Foundation
import SafeArchive
import SignedManifest

/// A release's archive rebuilt from the previous release's archive and the patch between
/// their tree tars (docs/site-mirror.md#rebuilding-an-archive), so a mirror takes one patch
/// from the origin, not one archive.
///
/// Archives are reproducible (docs/formats.md#reproducible-archives): `publish` writes the
/// scanned tree with fixed times, owners and modes through ``ArchiveWriter``, and the tree
/// tar of a patch holds the same entries. So the base archive is unpacked under a device's
/// entry rule and caps, rebuilt as a tree tar and checked against the patch's signed
/// `base`; the patch applied under the frame caps must give the signed tree; that tree
/// unpacked and written as an archive of the release's format must be the signed archive
/// (size and SHA-256). What the tree tar loses, an executable bit (it stores every file
/// 0644), or another zlib than the publisher's, gives other bytes: the rebuild is then
/// refused and the mirror downloads the archive.
struct ArchiveRebuild {
    /// The caps of unpacking (a device's defaults).
    let limits: ExtractionLimits

    /// The archive format a release's URL names, or nil for one the mirror cannot rebuild.
    static func format(of url: String) -> ArchiveFormat? {
        let path = URL(string: url)?.path ?? url
        return ArchiveFormat.allCases.first { path.hasSuffix("." + $0.fileExtension) }
    }

    /// Rebuilds `release`'s archive at `output` from `baseArchive` (the verified archive of
    /// `patch.from`) and `patchFile` (the verified patch), in `work` (created and removed).
    /// - Throws: ``SiteMirrorError`` `.refused` naming the step whose result is not the
    ///   signed one; the errors of unpacking, patching and writing as they are.
    func rebuild(
        _ release: Manifest, delta: ReleaseDelta, patch: ReleaseDelta.Patch, baseArchive: String, patchFile: String, work: String,
        output: String
    ) throws {
        guard let format = Self.format(of: release.url) else {
            throw SiteMirrorError(.refused, "release \(release.version): the archive \(release.url) is of no format the mirror writes")
        }
        let treeCap = Int64(clamping: limits.maxTotalBytes) + Int64(limits.maxEntries) * 2048 + (1 << 20)
        guard delta.treeSize <= treeCap else {
            throw SiteMirrorError(.refused, "release \(release.version): its \(delta.treeSize)-byte tree is over the unpacking cap")
        }
        guard mkdir(work, 0o700) == 0 else { throw SiteMirrorError.io("cannot create", path: work, errno: errno) }
        defer { try? AtomicFile.removeTree(work) }
        let extractor = SafeExtractor(limits: limits)
        // 1. The base tree tar, from the base archive, proven by the patch's signed base.
        try Self.withDescriptor(baseArchive) { _ = try extractor.extract(fileDescriptor: $0, into: work + "/base") }
        try ArchiveWriter.writeTreeTar(try SourceTree.scan(work + "/base", includeHidden: true), to: work + "/base.tar")
        try? AtomicFile.removeTree(work + "/base")
        let baseHash = try Digest.hex(.sha256, ofFileAt: work + "/base.tar")
        guard baseHash == patch.base else {
            throw SiteMirrorError(
                .refused, "release \(patch.from)'s archive rebuilds to a tree of sha256 \(baseHash), not the patch's base \(patch.base)")
        }
        // 2. The patch applied: the signed tree tar of the release.
        let treeHash = try ZstdPatch.apply(patch: patchFile, base: work + "/base.tar", to: work + "/tree.tar", resultSize: delta.treeSize)
        unlink(work + "/base.tar")
        guard treeHash == delta.treeSHA256 else {
            throw SiteMirrorError(.refused, "the patched tree hashes to sha256 \(treeHash), not the signed \(delta.treeSHA256)")
        }
        // 3. The tree written as the release's archive: the signed bytes, or refused.
        try Self.withDescriptor(work + "/tree.tar") { _ = try extractor.extractTreeTar(fileDescriptor: $0, into: work + "/tree") }
        unlink(work + "/tree.tar")
        try ArchiveWriter.write(try SourceTree.scan(work + "/tree", includeHidden: true), format: format, to: output)
        let hash = try Digest.hex(.sha256, ofFileAt: output)
        var st = stat()
        let size = stat(output, &st) == 0 ? Int64(st.st_size) : -1
        guard hash == release.sha256, size == release.size else {
            unlink(output)
            throw SiteMirrorError(
                .refused,
                "the rebuilt archive of release \(release.version) is \(size) bytes of sha256 \(hash), not the signed \(release.size) bytes of "
                    + "\(release.sha256) (an executable file, or another compressor than the publisher's)")
        }
    }

    private static func withDescriptor(_ path: String, _ body: (Int32) throws -> Void) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw SiteMirrorError.io("cannot open", path: path, errno: errno) }
        defer { close(fd) }
        try body(fd)
    }
}

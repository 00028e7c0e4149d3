import ClientUpdater
import DeltaPatch
import Foundation
import SafeArchive
import SignedManifest

/// Makes the `delta` of a new release (docs/delta-updates.md#publishing): the release's
/// tree tar, and a zstd patch to it from the tree tar of each of the newest ``bases``
/// older releases of the channel whose archives are in the release folder.
///
/// A base's tree tar is rebuilt from its published archive, unpacked by the same
/// ``SafeExtractor`` devices use, so it is byte for byte what a device holding that release
/// rebuilds. A patch no smaller than the full archive is left out: devices coming from
/// that release download the archive.
struct DeltaBuilder {
    /// How many older releases get a patch by default.
    static let defaultBases = 3

    /// An immutable file written to the work folder (a patch, the file list or an
    /// object), to be installed at `<channel>/<name>`.
    struct PatchFile {
        var temp: String
        var name: String
        var sha256: String
    }

    /// What the delta would cost a device coming from one older release.
    struct Cost: Sendable, Equatable {
        var from: Version
        /// Bytes of the patch; `nil` when the full archive is cheaper (no patch written).
        var patchBytes: Int64?
    }

    struct Built {
        var delta: ReleaseDelta
        var files: [PatchFile]
        var costs: [Cost]
    }

    let channelDir: String
    let work: String
    let bases: Int

    func build(tree: SourceTree, version: Version, archiveSize: Int64, index: ReleaseIndex) throws -> Built {
        let target = work + "/tree.tar"
        try ArchiveWriter.writeTreeTar(tree, to: target)
        var delta = ReleaseDelta(
            treeSHA256: try Digest.hex(.sha256, ofFileAt: target), treeSize: try Publisher.fileSize(target), patches: [])
        var files: [PatchFile] = []
        let (list, objects) = try writeObjects(of: tree)
        let listBytes = list.canonicalBytes
        let listSHA256 = Digest.hex(.sha256, of: listBytes)
        let listName = "files/\(listSHA256).json"
        try AtomicFile.write(Data(listBytes), to: work + "/\(listSHA256).json")
        files += objects
        files.append(PatchFile(temp: work + "/\(listSHA256).json", name: listName, sha256: listSHA256))
        delta.files = ReleaseDelta.Files(
            url: listName, sha256: listSHA256, size: Int64(listBytes.count), count: list.files.count, objects: "objects/")
        var costs: [Cost] = []
        for (old, archive) in olderReleases(below: version, index: index).prefix(bases) {
            let (baseTar, baseSHA256) = try rebuildTreeTar(of: old, archive: archive)
            let bytes: [UInt8]
            do {
                bytes = try ZstdPatch.make(base: baseTar, target: target, cap: 1 << 34)
            } catch {
                throw SignedArchiveError(.archiveFailed, "cannot make the patch from \(old): \(error.message)")
            }
            unlink(baseTar)
            guard Int64(bytes.count) < archiveSize else {
                costs.append(Cost(from: old, patchBytes: nil))
                continue
            }
            let sha = Digest.hex(.sha256, of: bytes)
            let temp = work + "/\(sha).zst"
            try AtomicFile.write(Data(bytes), to: temp)
            let name = "patches/\(sha).zst"
            files.append(PatchFile(temp: temp, name: name, sha256: sha))
            delta.patches.append(
                ReleaseDelta.Patch(from: old, base: baseSHA256, url: name, sha256: sha, size: Int64(bytes.count)))
            costs.append(Cost(from: old, patchBytes: Int64(bytes.count)))
        }
        return Built(delta: delta, files: files, costs: costs)
    }

    /// The file list of `tree` and a copy of each distinct file content, named by its
    /// SHA-256 (`objects/<sha256>`), hashed from the bytes copied so list and objects agree.
    private func writeObjects(of tree: SourceTree) throws -> (ReleaseFileList, [PatchFile]) {
        let folder = work + "/objects"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var listed: [ReleaseFileList.File] = []
        var objects: [String: PatchFile] = [:]
        var seen = Set<String>()
        for entry in tree.entries where !entry.isDirectory {
            let temp = folder + "/\(listed.count)"
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: tree.root + "/" + entry.path))
            } catch {
                throw SignedArchiveError(.io, "cannot read \(tree.root)/\(entry.path): \(error.localizedDescription)")
            }
            let sha = Digest.hex(.sha256, of: data)
            listed.append(ReleaseFileList.File(path: entry.path, size: Int64(data.count), sha256: sha))
            guard seen.insert(sha).inserted else { continue }
            // Most files are unchanged from an earlier release: their object is there already
            // (checked here, not copied and synced again).
            let published = channelDir + "/objects/" + sha
            if FileManager.default.fileExists(atPath: published) {
                let existing = try Digest.hex(.sha256, ofFileAt: published)
                guard existing == sha else {
                    throw SignedArchiveError(.conflict, "\(published) exists with other bytes (sha256 \(existing)); objects are never overwritten")
                }
                continue
            }
            try AtomicFile.write(data, to: temp)
            objects[sha] = PatchFile(temp: temp, name: "objects/\(sha)", sha256: sha)
        }
        return (ReleaseFileList(files: listed), objects.values.sorted { $0.name < $1.name })
    }

    /// Releases of the index below `version` whose archive is in the folder, newest first.
    func olderReleases(below version: Version, index: ReleaseIndex) -> [(Version, String)] {
        index.releases.compactMap { entry -> (Version, String)? in
            guard case .string(let text)? = entry["version"], let v = Version(text), v < version,
                case .string(let url)? = entry["url"], let format = ArchiveFormat(fileName: url)
            else { return nil }
            let path = channelDir + "/" + Manifest.archiveName(version: v, format: format)
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            return (v, path)
        }
        .sorted { $0.0 > $1.0 }
    }

    /// Unpacks `archive` as devices do and writes its tree tar; returns the tar's path and
    /// SHA-256.
    private func rebuildTreeTar(of version: Version, archive: String) throws -> (String, String) {
        let unpacked = work + "/base-\(version)"
        let fd = open(archive, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SignedArchiveError(.io, "cannot open \(archive): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var limits = ExtractionLimits.default
        limits.maxTotalBytes = 1 << 34
        _ = try SafeExtractor(limits: limits).extract(fileDescriptor: fd, into: unpacked)
        let tar = work + "/base-\(version).tar"
        try ArchiveWriter.writeTreeTar(try SourceTree.scan(unpacked, includeHidden: true), to: tar)
        try? AtomicFile.removeTree(unpacked)
        return (tar, try Digest.hex(.sha256, ofFileAt: tar))
    }
}

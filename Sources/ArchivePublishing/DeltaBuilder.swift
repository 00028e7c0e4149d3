import ClientFoundation
import DeltaPatch
import Foundation
import SafeArchive
import SignedManifest
import StrictJSON

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
        /// Why no patch was built from this release (it shares too little with the new
        /// tree, ``PatchEstimate``); `nil` when one was built.
        var skipped: String?
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
        for (old, archive, entry) in olderReleases(below: version, index: index).prefix(bases) {
            // Judge the base from file lists first: one that shares little costs a full
            // compression pass and gives a patch about the archive's size.
            var unpacked: String?
            defer { if let unpacked { try? AtomicFile.removeTree(unpacked) } }
            let baseFiles: [ReleaseFileList.File]
            if let published = publishedFileList(of: entry, version: old) {
                baseFiles = published
            } else {
                let folder = try unpack(old, archive: archive)
                unpacked = folder
                baseFiles = try Self.listFiles(in: folder)
            }
            let estimate = PatchEstimate(new: list.files, base: baseFiles)
            guard estimate.worthBuilding else {
                costs.append(Cost(from: old, patchBytes: nil, skipped: "\(old) \(estimate.reason)"))
                continue
            }
            let folder = try unpacked ?? unpack(old, archive: archive)
            unpacked = folder
            let (baseTar, baseSHA256) = try treeTar(of: old, unpacked: folder)
            let temp = work + "/patch-\(old).zst"
            let made: ZstdPatch.Made
            do {
                made = try ZstdPatch.make(base: baseTar, target: target, to: temp, cap: 1 << 34)
            } catch {
                throw ArchivePublishingError(.archiveFailed, "cannot make the patch from \(old): \(error.message)")
            }
            unlink(baseTar)
            guard made.size < archiveSize else {
                unlink(temp)
                costs.append(Cost(from: old, patchBytes: nil))
                continue
            }
            let name = "patches/\(made.sha256).zst"
            files.append(PatchFile(temp: temp, name: name, sha256: made.sha256))
            delta.patches.append(
                ReleaseDelta.Patch(from: old, base: baseSHA256, url: name, sha256: made.sha256, size: made.size))
            costs.append(Cost(from: old, patchBytes: made.size))
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
                throw ArchivePublishingError(.io, "cannot read \(tree.root)/\(entry.path): \(error.localizedDescription)")
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
                    throw ArchivePublishingError(
                        .conflict, "\(published) exists with other bytes (sha256 \(existing)); objects are never overwritten")
                }
                continue
            }
            try AtomicFile.write(data, to: temp)
            objects[sha] = PatchFile(temp: temp, name: "objects/\(sha)", sha256: sha)
        }
        return (ReleaseFileList(files: listed), objects.values.sorted { $0.name < $1.name })
    }

    /// Releases of the index below `version` whose archive is in the folder, newest first.
    func olderReleases(below version: Version, index: ReleaseIndex) -> [(Version, String, JSONObject)] {
        index.releases.compactMap { entry -> (Version, String, JSONObject)? in
            guard case .string(let text)? = entry["version"], let v = Version(text), v < version,
                case .string(let url)? = entry["url"], let format = ArchiveFormat(fileName: url)
            else { return nil }
            let path = channelDir + "/" + Manifest.archiveName(version: v, format: format)
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            return (v, path, entry)
        }
        .sorted { $0.0 > $1.0 }
    }

    /// The file list an older release was published with, when it is in the folder with
    /// its signed size and SHA-256 (`nil` otherwise: the base is unpacked and listed).
    private func publishedFileList(of entry: JSONObject, version: Version) -> [ReleaseFileList.File]? {
        guard let value = entry["delta"], case .success(let delta) = ReleaseDelta.parse(value, version: version),
            let files = delta.files, !files.url.contains(".."), files.size <= 1 << 30,
            let data = FileManager.default.contents(atPath: channelDir + "/" + files.url),
            Int64(data.count) == files.size, Digest.hex(.sha256, of: data) == files.sha256,
            case .success(let list) = ReleaseFileList.parse(Array(data), maxFiles: files.count)
        else { return nil }
        return list.files
    }

    /// The regular files of an unpacked tree, hashed (for a base published without a file list).
    static func listFiles(in folder: String) throws -> [ReleaseFileList.File] {
        try SourceTree.scan(folder, includeHidden: true).entries.filter { !$0.isDirectory }.map { entry in
            ReleaseFileList.File(path: entry.path, size: entry.size, sha256: try Digest.hex(.sha256, ofFileAt: folder + "/" + entry.path))
        }
    }

    /// Unpacks `archive` as devices do; returns the folder.
    private func unpack(_ version: Version, archive: String) throws -> String {
        let unpacked = work + "/base-\(version)"
        let fd = open(archive, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ArchivePublishingError(.io, "cannot open \(archive): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var limits = ExtractionLimits.default
        limits.maxTotalBytes = 1 << 34
        _ = try SafeExtractor(limits: limits).extract(fileDescriptor: fd, into: unpacked)
        return unpacked
    }

    /// Writes the tree tar of an unpacked base; returns the tar's path and SHA-256.
    private func treeTar(of version: Version, unpacked: String) throws -> (String, String) {
        let tar = work + "/base-\(version).tar"
        try ArchiveWriter.writeTreeTar(try SourceTree.scan(unpacked, includeHidden: true), to: tar)
        return (tar, try Digest.hex(.sha256, ofFileAt: tar))
    }
}

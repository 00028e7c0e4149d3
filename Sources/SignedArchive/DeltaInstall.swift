import ClientFoundation
import ClientUpdater
import DeltaPatch
import Foundation
import SafeArchive
import SignedManifest

/// The delta path of one install (docs/delta-updates.md#on-the-device): rebuild the tree
/// tar of a version this device holds, check it against the patch's signed `base`, fetch
/// the patch (resumable, size- and hash-checked), apply it under the frame caps, check the
/// result against the signed tree hash, and unpack it under the same entry rule and caps
/// as an archive.
///
/// It never promotes and never throws: it hands back an unpacked tree, or the reason it
/// could not (the caller then installs from the full archive). Installed versions are only
/// read.
struct DeltaInstall {
    let channel: ArchiveChannel
    let manifest: Manifest
    let manifestURL: URL
    let downloader: Downloader
    let extractor: SafeExtractor
    /// Where the install notes go.
    let reporter: CheckReporter

    /// An unpacked tree ready to promote, with the note that says how it came.
    struct Unpacked {
        var staging: String
        var tree: String
        var note: String
        /// The bytes this path downloaded (the patch; the file list and its objects), for the
        /// `downloaded` report.
        var bytes: Int64
        /// Downloads kept for a rerun, to remove once the tree is promoted.
        var leftovers: [String] = []
    }

    enum Outcome {
        case unpacked(Unpacked)
        /// Use the full archive; the note says why (`nil`: the release has no delta).
        case fullArchive(note: String?)
    }

    var layout: RootLayout { channel.layout }

    /// Where the download of a patch lives while incomplete: named from signed values
    /// only, kept across runs so a rerun resumes it.
    static func partialPath(layout: RootLayout, patch: ReleaseDelta.Patch) -> String {
        layout.clients + "/.staging-partial-patch-\(patch.sha256.prefix(32)).zst"
    }

    /// True when `path` holds exactly the signed bytes of `patch`.
    static func isComplete(_ path: String, _ patch: ReleaseDelta.Patch) -> Bool {
        FileListInstall.isComplete(path, size: patch.size, sha256: patch.sha256)
    }

    func run(keeping archivePartial: String) async -> Outcome {
        guard let field = manifest.delta else { return .fullArchive(note: nil) }
        let delta: ReleaseDelta
        switch field {
        case .success(let d): delta = d
        case .failure(let why): return .fullArchive(note: "release \(manifest.version): delta field refused (\(why.message)); using the full archive")
        }
        let held: [String: String]
        do {
            held = Dictionary(
                try channel.store.installedVersions().map { ($0.id, $0.directory) }, uniquingKeysWith: { first, _ in first })
        } catch {
            return .fullArchive(note: "release \(manifest.version): cannot list installed versions (\(error)); using the full archive")
        }
        // A first install: nothing to build on, the archive is the only path.
        guard !held.isEmpty else { return .fullArchive(note: nil) }
        let usable = delta.patches.filter { held[$0.from.description] != nil && $0.size < manifest.size }.sorted { $0.size < $1.size }
        let limits = channel.config.limits
        let treeCap = limits.maxUnpackedBytes + Int64(limits.maxEntries) * 2048 + (1 << 20)
        guard delta.treeSize <= treeCap else {
            return .fullArchive(
                note: "release \(manifest.version): its \(delta.treeSize)-byte tree is over this device's cap; using the full archive")
        }
        let partial = usable.first.map { Self.partialPath(layout: layout, patch: $0) }
        let listPath = delta.files.map { FileListInstall.listPath(layout: layout, files: $0) }
        channel.store.cleanLeftovers(
            keeping: Set([partial, listPath, archivePartial, FileListInstall.objectsFolder(layout: layout)].compactMap { $0 }))
        // The file list is worth fetching only when it alone costs less than the best other path.
        let best = min(manifest.size, usable.first?.size ?? .max)
        var listNote: String?
        if let files = delta.files, files.size < best {
            switch await viaFileList(files, held: held, cheaperThan: best) {
            case .unpacked(let unpacked): return .unpacked(unpacked)
            case .fullArchive(let note): listNote = note
            }
        }
        guard let patch = usable.first, let partial else {
            if let listNote { return .fullArchive(note: listNote + "; using the full archive") }
            // A release without patches: the archive is the only path.
            guard !delta.patches.isEmpty else { return .fullArchive(note: nil) }
            let offered = delta.patches.map(\.from.description).joined(separator: ", ")
            let have = held.keys.sorted().joined(separator: ", ")
            return .fullArchive(
                note: "release \(manifest.version): no patch from a version this device holds (patches from \(offered); installed: \(have)); "
                    + "using the full archive")
        }
        if let listNote { reporter.note(listNote + "; trying the patch") }
        let staging: String
        do {
            staging = try channel.store.makeStagingDirectory(label: "v\(manifest.version)-delta")
        } catch {
            return .fullArchive(note: "release \(manifest.version): \(Self.message(error)); using the full archive")
        }
        do {
            let tree = try await unpack(patch, delta: delta, baseDirectory: held[patch.from.description] ?? "", partial: partial, staging: staging)
            unlink(partial)
            let note = "release \(manifest.version): patch from \(patch.from): \(patch.size) bytes instead of the \(manifest.size)-byte archive"
            // A file list fetched but not used goes too.
            return .unpacked(Unpacked(staging: staging, tree: tree, note: note, bytes: patch.size, leftovers: listPath.map { [$0] } ?? []))
        } catch {
            try? AtomicFile.removeTree(staging)
            return .fullArchive(note: "release \(manifest.version): patch from \(patch.from) refused: \(Self.message(error)); using the full archive")
        }
    }

    /// The per-file path: a note (and the archive) when it is refused or not the cheapest.
    private func viaFileList(_ files: ReleaseDelta.Files, held: [String: String], cheaperThan best: Int64) async -> Outcome {
        let install = FileListInstall(
            channel: channel, manifest: manifest, manifestURL: manifestURL, downloader: downloader, files: files, held: held,
            limits: extractor.limits)
        let plan: FileListInstall.Plan
        do {
            plan = try await install.plan()
        } catch {
            // A download stopped (a hold, a closing window) keeps what it fetched for the next check.
            if !Task.isCancelled { unlink(FileListInstall.listPath(layout: layout, files: files)) }
            return .fullArchive(note: "release \(manifest.version): file list refused: \(Self.message(error))")
        }
        let cost = files.size + plan.downloadBytes
        guard cost < best else { return .fullArchive(note: nil) }
        let staging: String
        do {
            staging = try channel.store.makeStagingDirectory(label: "v\(manifest.version)-files")
        } catch {
            return .fullArchive(note: "release \(manifest.version): \(Self.message(error))")
        }
        do {
            let tree = try await install.build(plan, staging: staging)
            let count = plan.tree.items.count
            let note =
                "release \(manifest.version): \(plan.local.count) of \(count) files from installed versions, "
                + "\(plan.missing.count) downloaded: \(cost) bytes with the file list instead of the \(manifest.size)-byte archive"
            return .unpacked(
                Unpacked(
                    staging: staging, tree: tree, note: note, bytes: cost,
                    leftovers: [FileListInstall.listPath(layout: layout, files: files), FileListInstall.objectsFolder(layout: layout)]))
        } catch {
            try? AtomicFile.removeTree(staging)
            return .fullArchive(note: "release \(manifest.version): file list path refused: \(Self.message(error))")
        }
    }

    /// A signed URL (patch, file list, object) relative to the manifest's, under the
    /// archive URL rule.
    static func resolve(_ text: String, what: String, manifestURL: URL, allowInsecureHTTP: Bool) throws -> URL {
        guard let url = URL(string: text, relativeTo: manifestURL)?.absoluteURL, url.scheme != nil else {
            throw SignedArchiveError(.deltaRejected, "\(what) url \"\(text)\" is not a valid URL")
        }
        if case .refused(let why) = URLPolicy.check(
            url, manifestIsFile: manifestURL.scheme?.lowercased() == "file", allowInsecureHTTP: allowInsecureHTTP)
        {
            throw SignedArchiveError(.deltaRejected, "\(what) URL \(why)")
        }
        return url
    }

    static func message(_ error: any Error) -> String { (error as? any ClientctlError)?.message ?? "\(error)" }

    private func unpack(_ patch: ReleaseDelta.Patch, delta: ReleaseDelta, baseDirectory: String, partial: String, staging: String) async throws
        -> String
    {
        // 1. The base: the installed tree, rebuilt as a tree tar and proven by its hash.
        let baseTar = staging + "/base.tar"
        // The heavy steps run off the cooperative pool, so `serve` keeps answering meanwhile.
        let baseHash = try await BlockingExecutor.run {
            try ArchiveWriter.writeTreeTar(try SourceTree.scan(baseDirectory, includeHidden: true), to: baseTar)
            return try Digest.hex(.sha256, ofFileAt: baseTar)
        }
        guard baseHash == patch.base else {
            throw SignedArchiveError(.deltaRejected, "the installed \(patch.from) rebuilds to sha256 \(baseHash), not the patch's base \(patch.base)")
        }
        try FaultPoint.hit("delta.base-rebuilt") { SignedArchiveError.io("cannot write", path: baseTar, errno: $0) }
        // 2. The patch: downloaded like an archive (resumable, exact size, signed hash).
        let url = try Self.resolve(patch.url, what: "patch", manifestURL: manifestURL, allowInsecureHTTP: channel.config.allowInsecureHTTP)
        // A run killed after the patch arrived left it whole: use it, fetch nothing again.
        if !Self.isComplete(partial, patch) {
            _ = try await downloader.download(url, to: partial, expectedSize: patch.size, expectedDigest: patch.sha256, algorithm: .sha256)
        }
        try FaultPoint.hit("delta.patch-downloaded") { SignedArchiveError.io("cannot fsync", path: partial, errno: $0) }
        // 3. Apply under the frame caps; the result must be the signed tree tar.
        let result = staging + "/tree.tar"
        let resultHash: String
        let treeSize = delta.treeSize
        do {
            resultHash = try await BlockingExecutor.run { try ZstdPatch.apply(patch: partial, base: baseTar, to: result, resultSize: treeSize) }
        } catch {
            unlink(partial)  // verified bytes that do not apply: nothing to resume
            throw error
        }
        unlink(baseTar)
        guard resultHash == delta.treeSHA256 else {
            unlink(partial)
            throw SignedArchiveError(.deltaRejected, "the patched tree hashes to sha256 \(resultHash), not the signed \(delta.treeSHA256)")
        }
        // 4. Unpack under the entry rule and caps of an archive.
        let tree = staging + "/tree"
        let extractor = self.extractor
        try await BlockingExecutor.run {
            let fd = open(result, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { throw SignedArchiveError(.io, "cannot open \(result): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            _ = try extractor.extractTreeTar(fileDescriptor: fd, into: tree)
        }
        unlink(result)
        return tree
    }
}

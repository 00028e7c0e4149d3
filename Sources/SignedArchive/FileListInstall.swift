import ClientFoundation
import ClientUpdater
import DeltaPatch
import Foundation
import SafeArchive
import SignedManifest

/// The per-file path of a delta update (docs/delta-updates.md#on-the-device): fetch the
/// release's signed file list, hard-link every listed file this device already holds in
/// an installed version (found by size, proven by hashing it), download the rest as
/// content-addressed objects, and build the tree in a staging folder.
///
/// Installed trees are only read: a linked file is the same inode as the installed one,
/// and installed files are never written. Every file is checked against the signed
/// SHA-256 before it is linked into staging; the list itself passes the entry rule and
/// caps of extraction (``ListedTree``) before anything is created.
struct FileListInstall {
    let channel: ArchiveChannel
    let manifest: Manifest
    let manifestURL: URL
    let downloader: Downloader
    let files: ReleaseDelta.Files
    /// Installed versions: version → folder.
    let held: [String: String]
    let limits: ExtractionLimits

    /// What building the tree needs: the checked list, where each file comes from, and
    /// what must be downloaded.
    struct Plan {
        var tree: ListedTree<ReleaseFileList.File>
        /// Item index → an installed file with the item's size and SHA-256, as it was when hashed.
        var local: [Int: HashedFile]
        /// Distinct objects to download (by SHA-256), with their sizes.
        var missing: [String: Int64]
        var downloadBytes: Int64 { missing.values.reduce(0, +) }
    }

    var layout: RootLayout { channel.layout }

    /// Where the list lives until the install is done (named from signed values only).
    static func listPath(layout: RootLayout, files: ReleaseDelta.Files) -> String {
        layout.clients + "/.staging-partial-files-\(files.sha256.prefix(32)).json"
    }

    /// Downloaded objects, kept across runs so a rerun fetches only what is missing.
    static func objectsFolder(layout: RootLayout) -> String { layout.clients + "/.staging-partial-objects" }

    /// Fetches (or reuses) the signed list, checks it, and finds the files held locally.
    func plan() async throws -> Plan {
        let path = Self.listPath(layout: layout, files: files)
        guard files.size <= Int64(limits.maxEntries) * 2048 + 4096 else {
            throw SignedArchiveError(.deltaRejected, "the \(files.size)-byte file list is over this device's cap")
        }
        if !Self.isComplete(path, size: files.size, sha256: files.sha256) {
            _ = try await downloader.download(
                try resolve(files.url, what: "file list"), to: path, expectedSize: files.size, expectedDigest: files.sha256,
                algorithm: .sha256)
        }
        guard let read = try BoundedFile.read(path, cap: Int(files.size), code: SignedArchiveError.Code.io) else {
            throw SignedArchiveError(.notFound, "file list \(path) is gone")
        }
        let bytes = [UInt8](read)
        let list: ReleaseFileList
        switch ReleaseFileList.parse(bytes, maxFiles: limits.maxEntries) {
        case .success(let parsed): list = parsed
        case .failure(let rejection): throw SignedArchiveError(.deltaRejected, "file list: \(rejection.message)")
        }
        guard list.files.count == files.count else {
            throw SignedArchiveError(.deltaRejected, "the file list has \(list.files.count) files, the manifest signs \(files.count)")
        }
        let tree = try ListedTree.check(list, limits: limits)
        let folders = held.keys.sorted(by: >).compactMap { held[$0] }
        // Hashing installed files runs off the cooperative pool (`serve` keeps answering).
        return try await BlockingExecutor.run {
            var index = HeldFiles(folders: folders)
            var plan = Plan(tree: tree, local: [:], missing: [:])
            for (k, item) in tree.items.enumerated() {
                if let found = index.find(size: item.file.size, sha256: item.file.sha256) {
                    plan.local[k] = found
                } else {
                    plan.missing[item.file.sha256] = item.file.size
                }
            }
            return plan
        }
    }

    /// Downloads what is missing and builds the tree under `staging/tree`.
    func build(_ plan: Plan, staging: String) async throws -> String {
        let objects = Self.objectsFolder(layout: layout)
        if !plan.missing.isEmpty { try AtomicFile.makeDirectory(objects) }
        let downloaded = try await download(plan.missing, into: objects)
        try FaultPoint.hit("files.objects-downloaded") { SignedArchiveError.io("cannot fsync folder", path: objects, errno: $0) }
        let root = staging + "/tree"
        try await BlockingExecutor.run { try Self.link(plan, objects: downloaded, into: root) }
        return root
    }

    /// Creates the folders and links every file into `root`. Each source was hashed once
    /// (installed files while planning, objects while downloading); the linked inode must
    /// still be the one hashed, unchanged since (device, inode, size, modification time).
    private static func link(_ plan: Plan, objects: [String: HashedFile], into root: String) throws {
        try makeFolder(root)
        for folder in plan.tree.folders { try makeFolder(root + "/" + folder.joined(separator: "/")) }
        for (k, item) in plan.tree.items.enumerated() {
            let target = root + "/" + item.components.joined(separator: "/")
            guard let source = plan.local[k] ?? objects[item.file.sha256], source.sha256 == item.file.sha256 else {
                throw SignedArchiveError(.io, "no checked source for \(item.file.path)")
            }
            guard Glibc.link(source.path, target) == 0 else {
                throw SignedArchiveError(.io, "cannot link \(source.path) to \(target): \(String(cString: strerror(errno)))")
            }
            guard FileIdentity(path: target) == source.identity else {
                unlink(target)
                throw SignedArchiveError(.deltaRejected, "\(source.path) changed after it was checked against sha256 \(source.sha256)")
            }
            try FaultPoint.hit("files.linked") { code in
                SignedArchiveError(.io, "cannot link \(source.path) to \(target): \(String(cString: strerror(code)))")
            }
        }
        for folder in plan.tree.folders.reversed() { try sync(root + "/" + folder.joined(separator: "/")) }
        try sync(root)
    }

    /// Up to four downloads at a time (``ArchiveChannel/objectDownloads``); an object a killed
    /// run left complete is checked, not fetched again. Returns every object as hashed (by
    /// the download, or by that check).
    private func download(_ missing: [String: Int64], into folder: String) async throws -> [String: HashedFile] {
        var queue = missing.sorted { $0.key < $1.key }[...]
        var done: [String: HashedFile] = [:]
        try await withThrowingTaskGroup(of: HashedFile.self) { group in
            var running = 0
            let atOnce = max(1, channel.objectDownloads)
            while !queue.isEmpty || running > 0 {
                while running < atOnce, let (sha, size) = queue.popFirst() {
                    let path = folder + "/" + sha
                    if let kept = try? HashedFile.check(path, size: size, sha256: sha) {
                        done[sha] = kept
                        continue
                    }
                    let url = try resolve(files.objects + sha, what: "object")
                    let downloader = self.downloader
                    group.addTask {
                        _ = try await downloader.download(url, to: path, expectedSize: size, expectedDigest: sha, algorithm: .sha256)
                        guard chmod(path, 0o644) == 0, let identity = FileIdentity(path: path) else {
                            throw SignedArchiveError(.io, "cannot chmod \(path): \(String(cString: strerror(errno)))")
                        }
                        return HashedFile(path: path, sha256: sha, identity: identity)
                    }
                    running += 1
                }
                if running > 0, let file = try await group.next() {
                    done[file.sha256] = file
                    running -= 1
                }
            }
        }
        return done
    }

    private func resolve(_ text: String, what: String) throws -> URL {
        try DeltaInstall.resolve(text, what: what, manifestURL: manifestURL, allowInsecureHTTP: channel.config.allowInsecureHTTP)
    }

    private static func makeFolder(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw SignedArchiveError(.io, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        _ = chmod(path, 0o755)  // whatever the umask
    }

    private static func sync(_ path: String) throws {
        do {
            try AtomicFile.syncDirectory(path)
        } catch {
            throw SignedArchiveError(.io, "cannot sync \(path): \(error)")
        }
    }

    /// True when `path` is a regular file of exactly `size` bytes with this SHA-256.
    static func isComplete(_ path: String, size: Int64, sha256: String) -> Bool {
        (try? HashedFile.check(path, size: size, sha256: sha256)) != nil
    }
}

/// What a file was when it was looked at: a later link is checked against it instead of
/// hashing the file again.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: timespec

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modified = st.st_mtim
    }

    /// A regular file's identity (not following a symbolic link); nil for anything else.
    init?(path: String) {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        self.init(st)
    }

    static func == (a: FileIdentity, b: FileIdentity) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size && a.modified.tv_sec == b.modified.tv_sec
            && a.modified.tv_nsec == b.modified.tv_nsec
    }
}

/// A regular file, its SHA-256 and its identity when hashed.
struct HashedFile: Sendable {
    var path: String
    var sha256: String
    var identity: FileIdentity

    /// Hashes the regular file at `path` (not a link) through one descriptor; nil when it
    /// cannot be read or changed while being hashed.
    static func hash(_ path: String) -> HashedFile? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var before = stat()
        guard fstat(fd, &before) == 0, before.st_mode & S_IFMT == S_IFREG,
            let sha = try? Digest.hex(.sha256, ofDescriptor: fd, path: path)
        else { return nil }
        var after = stat()
        guard fstat(fd, &after) == 0, FileIdentity(after) == FileIdentity(before) else { return nil }
        return HashedFile(path: path, sha256: sha, identity: FileIdentity(before))
    }

    /// `path` hashed and checked to be a regular file of `size` bytes with this SHA-256.
    static func check(_ path: String, size: Int64, sha256: String) throws -> HashedFile {
        guard let file = hash(path) else { throw SignedArchiveError(.io, "cannot read \(path) as a regular file") }
        guard file.identity.size == size, file.sha256 == sha256 else {
            throw SignedArchiveError(
                .deltaRejected, "\(path) is \(file.identity.size) bytes with sha256 \(file.sha256), not the signed \(size) and \(sha256)")
        }
        return file
    }
}

/// The regular files of installed versions, by size, hashed only when a listed file of
/// the same size is looked for (and each at most once).
struct HeldFiles {
    private var bySize: [Int64: [String]] = [:]
    private var hashed: [String: HashedFile?] = [:]

    init(folders: [String]) {
        for folder in folders {
            guard let tree = try? SourceTree.scan(folder, includeHidden: true) else { continue }
            for entry in tree.entries where !entry.isDirectory {
                bySize[entry.size, default: []].append(folder + "/" + entry.path)
            }
        }
    }

    mutating func find(size: Int64, sha256: String) -> HashedFile? {
        for path in bySize[size] ?? [] {
            if hashed[path] == nil { hashed[path] = .some(HashedFile.hash(path)) }
            if let file = hashed[path] ?? nil, file.sha256 == sha256, file.identity.size == size { return file }
        }
        return nil
    }
}

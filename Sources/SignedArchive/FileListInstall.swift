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
        var tree: ListedTree
        /// Item index → an installed file with the item's size and SHA-256.
        var local: [Int: String]
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
            throw DeltaError(.outputTooLarge, "the \(files.size)-byte file list is over this device's cap")
        }
        if !Self.isComplete(path, size: files.size, sha256: files.sha256) {
            _ = try await downloader.download(
                try resolve(files.url, what: "file list"), to: path, expectedSize: files.size, expectedDigest: files.sha256,
                algorithm: .sha256)
        }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let list: ReleaseFileList
        switch ReleaseFileList.parse(bytes, maxFiles: limits.maxEntries) {
        case .success(let parsed): list = parsed
        case .failure(let rejection): throw DeltaError(.malformedPatch, "file list: \(rejection.message)")
        }
        guard list.files.count == files.count else {
            throw DeltaError(.malformedPatch, "the file list has \(list.files.count) files, the manifest signs \(files.count)")
        }
        let tree = try ListedTree.check(list, limits: limits)
        let folders = held.keys.sorted(by: >).compactMap { held[$0] }
        // Hashing installed files runs off the cooperative pool (`serve` keeps answering).
        return try await BlockingWork.run {
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
        try await download(plan.missing, into: objects)
        CrashPoint.hit("files.objects-downloaded")
        let root = staging + "/tree"
        try await BlockingWork.run { try Self.link(plan, from: objects, into: root) }
        return root
    }

    /// Creates the folders and links every file into `root`, each checked first.
    private static func link(_ plan: Plan, from objects: String, into root: String) throws {
        try makeFolder(root)
        for folder in plan.tree.folders { try makeFolder(root + "/" + folder.joined(separator: "/")) }
        for (k, item) in plan.tree.items.enumerated() {
            let target = root + "/" + item.components.joined(separator: "/")
            let source = plan.local[k] ?? objects + "/" + item.file.sha256
            // The signed hash, checked on the very inode that is linked.
            try verify(source, size: item.file.size, sha256: item.file.sha256)
            guard Glibc.link(source, target) == 0 else {
                throw DeltaError(.io, "cannot link \(source) to \(target): \(String(cString: strerror(errno)))")
            }
            CrashPoint.hit("files.linked")
        }
        for folder in plan.tree.folders.reversed() { try sync(root + "/" + folder.joined(separator: "/")) }
        try sync(root)
    }

    /// Up to four downloads at a time; each object resumes from what a killed run left.
    private func download(_ missing: [String: Int64], into folder: String) async throws {
        var queue = missing.sorted { $0.key < $1.key }[...]
        try await withThrowingTaskGroup(of: Void.self) { group in
            var running = 0
            while !queue.isEmpty || running > 0 {
                while running < 4, let (sha, size) = queue.popFirst() {
                    let path = folder + "/" + sha
                    if Self.isComplete(path, size: size, sha256: sha) { continue }
                    let url = try resolve(files.objects + sha, what: "object")
                    let downloader = self.downloader
                    group.addTask {
                        _ = try await downloader.download(url, to: path, expectedSize: size, expectedDigest: sha, algorithm: .sha256)
                        guard chmod(path, 0o644) == 0 else { throw DeltaError(.io, "cannot chmod \(path): \(String(cString: strerror(errno)))") }
                    }
                    running += 1
                }
                if running > 0 {
                    try await group.next()
                    running -= 1
                }
            }
        }
    }

    private func resolve(_ text: String, what: String) throws -> URL {
        try DeltaInstall.resolve(text, what: what, manifestURL: manifestURL, allowInsecureHTTP: channel.config.allowInsecureHTTP)
    }

    private static func makeFolder(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw DeltaError(.io, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        _ = chmod(path, 0o755)  // whatever the umask
    }

    private static func sync(_ path: String) throws {
        do {
            try AtomicFile.syncDirectory(path)
        } catch {
            throw DeltaError(.io, "cannot sync \(path): \(error)")
        }
    }

    /// True when `path` is a regular file of exactly `size` bytes with this SHA-256.
    static func isComplete(_ path: String, size: Int64, sha256: String) -> Bool {
        (try? verify(path, size: size, sha256: sha256)) != nil
    }

    /// Checks that `path` is a regular file (not a link) of `size` bytes hashing to `sha256`.
    static func verify(_ path: String, size: Int64, sha256: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw DeltaError(.io, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, Int64(st.st_size) == size else {
            throw DeltaError(.outputMismatch, "\(path) is not a regular file of the signed \(size) bytes")
        }
        let actual = try? Digest.hex(.sha256, ofDescriptor: fd, path: path)
        guard actual == sha256 else {
            throw DeltaError(.outputMismatch, "\(path) hashes to sha256 \(actual ?? "?"), not the signed \(sha256)")
        }
    }
}

/// The regular files of installed versions, by size, hashed only when a listed file of
/// the same size is looked for (and each at most once).
struct HeldFiles {
    private var bySize: [Int64: [String]] = [:]
    private var hashes: [String: String] = [:]

    init(folders: [String]) {
        for folder in folders {
            guard let tree = try? SourceTree.scan(folder, includeHidden: true) else { continue }
            for entry in tree.entries where !entry.isDirectory {
                bySize[entry.size, default: []].append(folder + "/" + entry.path)
            }
        }
    }

    mutating func find(size: Int64, sha256: String) -> String? {
        for path in bySize[size] ?? [] {
            let hash: String
            if let known = hashes[path] {
                hash = known
            } else {
                guard let computed = try? Digest.hex(.sha256, ofFileAt: path) else { continue }
                hashes[path] = computed
                hash = computed
            }
            if hash == sha256 { return path }
        }
        return nil
    }
}

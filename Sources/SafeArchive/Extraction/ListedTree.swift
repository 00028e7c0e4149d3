import ClientFoundation

/// A file of a signed file list, as ``ListedTree`` judges it: its path and size.
package protocol ListedFile: Sendable {
    /// The path under the release folder (`assets/app.js`).
    var path: String { get }
    /// The size in bytes.
    var size: Int64 { get }
}

/// The entry rule applied to a signed file list before a device builds a tree from it
/// (docs/delta-updates.md#the-file-list): every path is judged by the same ``EntryRule``
/// and ``EntryTree`` as an archive entry (no traversal, absolute paths, duplicates,
/// file/folder conflicts, names that collide when case is ignored or as Unicode), under
/// the same caps (entries, folders included, and bytes), with a regular `index.html` at
/// the root. A list that passes describes a tree extraction would also have accepted.
///
/// Generic over the list's file type (SignedManifest's `ReleaseFileList.File`), so that
/// the archive rules need nothing of manifests.
package struct ListedTree<File: ListedFile>: Sendable {
    /// One file to create: its path components under the staging folder.
    package struct Item: Sendable {
        package var components: [String]
        package var file: File
    }

    /// The files in list order, with their checked components.
    package var items: [Item]
    /// Folders to create, parents before children.
    package var folders: [[String]]

    /// Checks the files of a list, in list order, under `limits`.
    /// - Throws: ``SafeArchiveError`` `.archiveRejected` naming the entry and the rule
    ///   (`file list entry "../x" rejected: ".." path component`), `.archiveLimit` for a cap.
    package static func check(files: [File], limits: ExtractionLimits) throws -> ListedTree {
        let rule = limits.entryRule
        var tree = EntryTree()
        var items: [Item] = []
        var folders: [[String]] = []
        var seenFolders = Set<String>()
        var total: UInt64 = 0
        for file in files {
            let components: [String]
            switch rule.check(Array(file.path.utf8), isDirectory: false) {
            case .accepted(let c): components = c
            case .rejected(let why): throw refuse(file.path, why)
            }
            // A leading "./" is dropped by the rule; a list must name each file one way only.
            guard components.joined(separator: "/") == file.path else { throw refuse(file.path, "not in canonical form") }
            if let why = tree.add(components, isDirectory: false) { throw refuse(file.path, why) }
            for depth in 1..<max(components.count, 1) {
                let folder = Array(components.prefix(depth))
                if seenFolders.insert(folder.joined(separator: "/")).inserted { folders.append(folder) }
            }
            total += UInt64(file.size)
            guard total <= limits.maxTotalBytes else {
                throw SafeArchiveError(
                    .archiveLimit, "file list entry \(Quoting.quoted(file.path)) rejected: more than \(limits.maxTotalBytes) bytes in all")
            }
            guard items.count + 1 + folders.count <= limits.maxEntries else {
                throw SafeArchiveError(
                    .archiveLimit, "file list entry \(Quoting.quoted(file.path)) rejected: more than \(limits.maxEntries) entries")
            }
            items.append(Item(components: components, file: file))
        }
        guard tree.kind(of: "index.html") == .file else {
            throw SafeArchiveError(.archiveRejected, "file list rejected: no index.html file at the root")
        }
        return ListedTree(items: items, folders: folders)
    }

    private static func refuse(_ path: String, _ why: String) -> SafeArchiveError {
        SafeArchiveError(.archiveRejected, "file list entry \(Quoting.quoted(path)) rejected: \(why)")
    }
}

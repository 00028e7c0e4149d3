import ClientFoundation
import Foundation

/// Crash-safe deletion of a folder tree: rename it to `.trash-*` in the same folder
/// (atomic, fsynced), then delete. A half-deleted version therefore never sits under a
/// name that selection or the server would use; ``finishInterrupted(in:)`` removes what
/// an interrupted run left behind.
package enum Trash {
    /// The prefix of names being deleted.
    package static let prefix = ".trash-"

    /// Moves `path` out of the way atomically, then deletes it. Does nothing if it is missing.
    package static func discard(_ path: String) throws {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        let parent = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let trash = parent + "/" + prefix + name + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        guard rename(path, trash) == 0 else { throw UpdaterError.io("cannot move aside", path: path, errno: errno) }
        try AtomicFile.syncDirectory(parent)
        try AtomicFile.removeTree(trash)
    }

    /// Deletes every `.trash-*` entry left in `folder` by an interrupted deletion.
    /// - Returns: the names removed.
    @discardableResult
    package static func finishInterrupted(in folder: String) throws -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let leftovers = names.filter { $0.hasPrefix(prefix) }.sorted()
        for name in leftovers { try AtomicFile.removeTree(folder + "/" + name) }
        return leftovers
    }

    /// Finishes interrupted deletions in every folder of the root (`serving/` and each
    /// channel's store), whatever channels there are.
    @discardableResult
    package static func finishInterrupted(_ layout: RootLayout) throws -> [String] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: layout.root)) ?? []).sorted()
        return try names.filter { !$0.hasPrefix(".") }.flatMap { name -> [String] in
            var st = stat()
            let path = layout.root + "/" + name
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return [] }
            return try finishInterrupted(in: path)
        }
    }
}

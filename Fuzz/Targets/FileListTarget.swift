import Foundation

@testable import SafeArchive
@testable import SignedArchive
@testable import SignedManifest

/// A delta update's file list as a device reads it: ``ReleaseFileList/parse(_:maxFiles:)``
/// then ``ListedTree/check(_:limits:)`` (docs/delta-updates.md#the-file-list). An accepted
/// list must describe a tree extraction would accept: every path re-checked by the entry
/// rule is its own canonical form, no two paths are equal when case is ignored, no path is
/// a folder of another file, `index.html` is a root file, and the caps hold.
enum FileListTarget: FuzzTarget {
    static let name = "file-list"
    static let limits = ExtractionLimits(maxTotalBytes: 1 << 20, maxEntries: 200)

    static func run(_ data: [UInt8]) {
        guard case .success(let list) = ReleaseFileList.parse(data, maxFiles: limits.maxEntries) else { return }
        guard let tree = try? ListedTree.check(list, limits: limits) else { return }
        var folded = Set<String>()
        var total: Int64 = 0
        let paths = Set(tree.items.map { $0.components.joined(separator: "/") })
        for item in tree.items {
            let path = item.components.joined(separator: "/")
            guard case .accepted(let again) = limits.entryRule.check(Array(path.utf8), isDirectory: false), again == item.components,
                path == item.file.path
            else { FuzzFinding.fail(name, "accepted a path the entry rule refuses or rewrites: \(item.file.path.debugDescription)") }
            guard folded.insert(path.lowercased()).inserted else {
                FuzzFinding.fail(name, "two paths equal when case is ignored: \(path.debugDescription)")
            }
            for depth in 1..<max(item.components.count, 1) where paths.contains(item.components.prefix(depth).joined(separator: "/")) {
                FuzzFinding.fail(name, "a file is also a folder of \(path.debugDescription)")
            }
            total += item.file.size
        }
        guard paths.contains("index.html") else { FuzzFinding.fail(name, "accepted a list without index.html") }
        guard total <= Int64(limits.maxTotalBytes), tree.items.count + tree.folders.count <= limits.maxEntries else {
            FuzzFinding.fail(name, "accepted a list over the caps")
        }
    }
}

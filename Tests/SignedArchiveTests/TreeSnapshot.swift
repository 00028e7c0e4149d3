import Foundation

/// Every file and folder below a root: type, permission bits and contents, by relative
/// path. Two trees are identical when their snapshots are equal.
struct TreeSnapshot: Equatable, CustomStringConvertible {
    enum Node: Equatable {
        case directory(mode: UInt16)
        case file(mode: UInt16, contents: Data)
        case other
    }

    var nodes: [String: Node] = [:]

    init(_ root: String) throws {
        let fm = FileManager.default
        guard let walker = fm.enumerator(atPath: root) else { return }
        while let rel = walker.nextObject() as? String {
            let full = root + "/" + rel
            var st = stat()
            guard lstat(full, &st) == 0 else { continue }
            let mode = UInt16(st.st_mode & 0o7777)
            switch st.st_mode & S_IFMT {
            case S_IFDIR: nodes[rel] = .directory(mode: mode)
            case S_IFREG: nodes[rel] = .file(mode: mode, contents: fm.contents(atPath: full) ?? Data())
            default: nodes[rel] = .other
            }
        }
    }

    /// The same tree with modes normalised as publish writes them (0755 folders and
    /// executables, 0644 other files).
    func normalisedModes() -> TreeSnapshot {
        var copy = self
        for (k, v) in nodes {
            switch v {
            case .directory: copy.nodes[k] = .directory(mode: 0o755)
            case .file(let mode, let data): copy.nodes[k] = .file(mode: mode & 0o111 != 0 ? 0o755 : 0o644, contents: data)
            case .other: break
            }
        }
        return copy
    }

    var description: String { nodes.keys.sorted().joined(separator: ", ") }
}

/// Builds source folders for archive and publish tests.
enum SourceFolders {
    /// The sample client plus what stresses an archiver: an empty folder, an executable,
    /// a non-ASCII name, a long nested path, an empty file.
    static func rich(at path: String) throws {
        let fm = FileManager.default
        try fm.copyItem(atPath: TestPaths.sampleClient, toPath: path)
        try fm.createDirectory(atPath: path + "/empty", withIntermediateDirectories: true)
        let deep = path + "/a/very/deep/" + String(repeating: "long-folder-name-", count: 6) + "end"
        try fm.createDirectory(atPath: deep, withIntermediateDirectories: true)
        try Data("deep\n".utf8).write(to: URL(fileURLWithPath: deep + "/" + String(repeating: "f", count: 120) + ".txt"))
        try Data("#!/bin/sh\necho hi\n".utf8).write(to: URL(fileURLWithPath: path + "/tool.sh"))
        chmod(path + "/tool.sh", 0o755)
        try Data("crème brûlée 🍮\n".utf8).write(to: URL(fileURLWithPath: path + "/assets/crème-brûlée-🍮.txt"))
        try Data().write(to: URL(fileURLWithPath: path + "/empty.txt"))
    }
}

enum TestPaths {
    /// Fixtures/sample-client in the package.
    static var sampleClient: String {
        var url = URL(fileURLWithPath: #filePath)
        url.deleteLastPathComponent()
        url.deleteLastPathComponent()
        url.deleteLastPathComponent()
        return url.path + "/Fixtures/sample-client"
    }
}

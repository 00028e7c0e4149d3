import ClientFoundation
import Foundation

/// A built client folder checked for publishing: only regular files and folders, names a
/// device will accept, `index.html` at the top.
///
/// The rules mirror what devices enforce when unpacking (docs/threat-model.md#the-entry-rule), so publish
/// never produces an archive that devices refuse: no symlinks, no special files, every
/// file readable, names valid UTF-8 without control characters or `\`, each component at
/// most 255 bytes, whole paths at most 1024 bytes, at most ``maxDepth`` levels.
public struct SourceTree: Sendable {
    /// One file or folder, by its path relative to the root.
    public struct Entry: Sendable, Equatable {
        /// Relative path with `/` separators, no trailing slash (`assets/app.js`).
        public var path: String
        public var isDirectory: Bool
        /// File length in bytes (0 for folders).
        public var size: Int64
        /// True when the source file has any execute bit (archived as 0755, else 0644).
        public var isExecutable: Bool

        /// The name in an archive: folders end with `/`.
        public var archiveName: String { isDirectory ? path + "/" : path }
    }

    /// Deepest folder nesting accepted.
    public static let maxDepth = 32
    /// Longest accepted path component, in bytes.
    public static let maxComponentBytes = 255
    /// Longest accepted relative path, in bytes.
    public static let maxPathBytes = 1024

    /// The folder that was scanned.
    public let root: String
    /// Every file and folder below ``root``, sorted by archive name (UTF-8 bytes), so that
    /// a folder comes before its contents and the order never depends on the file system.
    public let entries: [Entry]

    /// Hidden files and folders (name starting with `.`) that were left out, by relative path.
    public var skippedHidden: [String] = []

    /// Scans `root`, refusing the first problem found with its path named.
    /// - Parameters:
    ///   - root: the build folder to scan.
    ///   - includeHidden: keep files and folders whose name starts with `.`
    ///     (`.env`, `.git/`); by default they are skipped and listed in ``skippedHidden``,
    ///     so secrets next to a build never reach devices by accident.
    /// - Throws: ``SafeArchiveError`` `.notFound` when `root` is not a readable folder,
    ///   `.sourceRejected` for a folder that breaks a rule.
    public static func scan(_ root: String, includeHidden: Bool = false) throws -> SourceTree {
        var st = stat()
        guard stat(root, &st) == 0 else {
            throw SafeArchiveError(.notFound, "\(root): \(String(cString: strerror(errno)))")
        }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw SafeArchiveError(.notFound, "\(root) is not a folder") }
        var entries: [Entry] = []
        var hidden: [String]? = includeHidden ? nil : []
        try walk(root: root, relative: "", depth: 1, into: &entries, hidden: &hidden)
        entries.sort { Array($0.archiveName.utf8).lexicographicallyPrecedes(Array($1.archiveName.utf8)) }
        // The tree half of the entry rule, as devices apply it: names that a case-insensitive
        // or normalizing file system would merge are refused here, not on the device.
        var names = EntryTree()
        for entry in entries {
            let components = entry.path.split(separator: "/").map(String.init)
            if let why = names.add(components, isDirectory: entry.isDirectory) { throw refuse(root + "/" + entry.path, why) }
        }
        guard entries.contains(where: { $0.path == "index.html" && !$0.isDirectory }) else {
            throw SafeArchiveError(.sourceRejected, "\(root) has no index.html at its top level (the archive root is the web root)")
        }
        var tree = SourceTree(root: root, entries: entries)
        tree.skippedHidden = (hidden ?? []).sorted()
        return tree
    }

    private static func refuse(_ path: String, _ why: String) -> SafeArchiveError {
        SafeArchiveError(.sourceRejected, "\(path): \(why)")
    }

    /// - Parameter hidden: nil to keep hidden names, else where skipped ones are listed.
    private static func walk(
        root: String, relative: String, depth: Int, into entries: inout [Entry],
        hidden: inout [String]?
    ) throws {
        let dirPath = relative.isEmpty ? root : root + "/" + relative
        guard depth <= maxDepth else { throw refuse(dirPath, "folders nested deeper than \(maxDepth) levels") }
        guard let dir = opendir(dirPath) else {
            throw refuse(dirPath, "cannot read folder: \(String(cString: strerror(errno)))")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let ent = readdir(dir) {
            let raw = withUnsafeBytes(of: ent.pointee.d_name) { buf in Array(buf.prefix { $0 != 0 }) }
            if raw == [0x2E] || raw == [0x2E, 0x2E] { continue }
            guard let name = String(validating: raw, as: UTF8.self) else {
                throw refuse(dirPath + "/" + String(decoding: raw, as: UTF8.self), "file name is not valid UTF-8")
            }
            names.append(name)
        }
        for name in names {
            let rel = relative.isEmpty ? name : relative + "/" + name
            let full = root + "/" + rel
            if name.hasPrefix("."), hidden != nil {
                hidden?.append(rel)
                continue
            }
            if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "\\" }) {
                throw refuse(full, "file name contains a control character or a backslash")
            }
            if let problem = ServedPathRule.problem(withStoredPath: rel) { throw refuse(full, problem) }
            guard name.utf8.count <= maxComponentBytes else { throw refuse(full, "file name longer than \(maxComponentBytes) bytes") }
            guard rel.utf8.count <= maxPathBytes else { throw refuse(full, "path longer than \(maxPathBytes) bytes") }
            var st = stat()
            guard lstat(full, &st) == 0 else { throw refuse(full, "cannot read: \(String(cString: strerror(errno)))") }
            switch st.st_mode & S_IFMT {
            case S_IFLNK:
                throw refuse(full, "symbolic link (only regular files and folders are published)")
            case S_IFDIR:
                entries.append(Entry(path: rel, isDirectory: true, size: 0, isExecutable: false))
                try walk(root: root, relative: rel, depth: depth + 1, into: &entries, hidden: &hidden)
            case S_IFREG:
                let fd = open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                guard fd >= 0 else { throw refuse(full, "unreadable file: \(String(cString: strerror(errno)))") }
                close(fd)
                entries.append(Entry(path: rel, isDirectory: false, size: Int64(st.st_size), isExecutable: st.st_mode & 0o111 != 0))
            default:
                throw refuse(full, "special file (\(kind(st.st_mode))): only regular files and folders are published")
            }
        }
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "fifo"
        case S_IFSOCK: return "socket"
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        default: return "unknown type"
        }
    }
}

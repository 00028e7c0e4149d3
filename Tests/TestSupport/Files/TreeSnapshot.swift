import ClientFoundation
import ClientUpdater
import Foundation

/// Everything under a folder: each path with its kind, mode and content hash. Two equal
/// snapshots mean nothing was added, removed or changed (used to prove that a rejected
/// install left a root exactly as it was).
public struct TreeSnapshot: Equatable, CustomStringConvertible {
    public var entries: [String: String]

    /// Snapshots `root`, ignoring the relative paths in `ignoring` (e.g. `last-check.json`, `lock`).
    public init(_ root: String, ignoring: Set<String> = ["last-check.json", "lock"]) throws {
        var entries: [String: String] = [:]
        let fm = FileManager.default
        guard let walker = fm.enumerator(atPath: root) else {
            self.entries = [:]
            return
        }
        while let rel = walker.nextObject() as? String {
            if ignoring.contains(rel) { continue }
            let full = root + "/" + rel
            var st = stat()
            guard lstat(full, &st) == 0 else { continue }
            let mode = String(st.st_mode & 0o7777, radix: 8)
            switch st.st_mode & S_IFMT {
            case S_IFREG: entries[rel] = "file \(mode) \(st.st_size) \(try Digest.hex(.sha256, ofFileAt: full))"
            case S_IFDIR: entries[rel] = "dir \(mode)"
            case S_IFLNK: entries[rel] = "link -> \((try? fm.destinationOfSymbolicLink(atPath: full)) ?? "?")"
            default: entries[rel] = "special \(String(st.st_mode, radix: 8))"
            }
        }
        self.entries = entries
    }

    /// The same tree with modes as publish writes them: 0755 for folders and executables,
    /// 0644 for other files (to compare a source folder with an archive unpacked from it).
    public func normalisedModes() -> TreeSnapshot {
        var copy = self
        for (path, entry) in entries {
            var words = entry.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard words.count >= 2, let mode = Int(words[1], radix: 8) else { continue }
            switch words[0] {
            case "dir": words[1] = "755"
            case "file": words[1] = mode & 0o111 != 0 ? "755" : "644"
            default: continue
            }
            copy.entries[path] = words.joined(separator: " ")
        }
        return copy
    }

    /// What differs from `other`, one line per path.
    public func difference(from other: TreeSnapshot) -> [String] {
        Set(entries.keys).union(other.entries.keys).sorted().compactMap { key in
            entries[key] == other.entries[key] ? nil : "\(key): \(other.entries[key] ?? "absent") -> \(entries[key] ?? "absent")"
        }
    }

    public var description: String { entries.keys.sorted().map { "\($0): \(entries[$0] ?? "")" }.joined(separator: "\n") }
}

import ClientFoundation
import Foundation
import SafeArchive
import SignedManifest

/// The objects of a channel folder that never change once published: trust roots
/// (`root/N.json`, in order), file contents (`objects/<sha256>`), file lists
/// (`files/<sha256>.json`), delta patches (`patches/<sha256>.zst`) and archives
/// (`v<version>.<format>`), in that order, so nothing uploaded points at a missing object.
/// `manifest.json`,
/// `index.json`, `pending/` (releases still short of signatures) and temporary or hidden
/// files are not among them.
enum ImmutableFiles {
    /// `(key, path)` pairs, roots first (lowest version first), then objects, file lists,
    /// patches and archives, each by name.
    static func list(channelFolder dir: String, channel: String) throws -> [(key: String, path: String)] {
        var roots: [(Int, String)] = []
        if let names = try? FileManager.default.contentsOfDirectory(atPath: dir + "/root") {
            for name in names where name.hasSuffix(".json") {
                guard let n = Int(name.dropLast(5)), n >= 1, "\(n).json" == name else { continue }
                roots.append((n, name))
            }
        }
        var files = try roots.sorted { $0.0 < $1.0 }.map { (key: "\(channel)/root/\($0.1)", path: try regular(dir + "/root/" + $0.1)) }
        for (folder, suffix) in [("objects", ""), ("files", ".json"), ("patches", ".zst")] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir + "/" + folder)) ?? []
            for name in names.sorted() where isContentName(name, suffix: suffix) {
                files.append((key: "\(channel)/\(folder)/\(name)", path: try regular(dir + "/\(folder)/" + name)))
            }
        }
        for path in ChannelCohorts.existingCopies(in: dir) {
            files.append((key: "\(channel)/\(path)", path: try regular(dir + "/" + path)))
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        for name in names.sorted() where isArchiveName(name) {
            files.append((key: "\(channel)/\(name)", path: try regular(dir + "/" + name)))
        }
        return files
    }

    /// `v<SemVer>.<format extension>`, as `publish` names archives.
    static func isArchiveName(_ name: String) -> Bool {
        guard name.hasPrefix("v") else { return false }
        for format in ArchiveFormat.allCases where name.hasSuffix("." + format.fileExtension) {
            return Version(String(name.dropFirst().dropLast(format.fileExtension.count + 1))) != nil
        }
        return false
    }

    /// `<64 lowercase hex><suffix>`, as `publish` names content-addressed files.
    static func isContentName(_ name: String, suffix: String) -> Bool {
        let hex = name.utf8.prefix(64)
        return name.utf8.count == 64 + suffix.utf8.count && name.hasSuffix(suffix) && LowerHex.matches(hex, count: 64)
    }

    /// `path` when it is a regular file (not a symlink or anything else).
    static func regular(_ path: String) throws -> String {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw ArchivePublishingError(.sourceRejected, "\(path) is not a regular file: only files publish wrote are pushed")
        }
        return path
    }
}

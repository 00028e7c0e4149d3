import ClientFoundation
import Foundation

/// The package's tree being assembled in a scratch folder: every file written with the
/// mode Debian expects (0755 folders and programs, 0644 the rest), whatever the umask.
struct DebStaging {
    let root: String

    func path(_ relative: String) -> String { root + "/" + relative }

    func makeFolder(_ relative: String) throws {
        let full = path(relative)
        do {
            try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        } catch {
            throw PackageError(.io, "cannot create \(full): \(error.localizedDescription)")
        }
        var folder = relative
        while !folder.isEmpty {
            chmod(path(folder), 0o755)
            folder = (folder as NSString).deletingLastPathComponent
        }
    }

    func write(_ data: Data, to relative: String, mode: mode_t = 0o644) throws {
        try makeFolder((relative as NSString).deletingLastPathComponent)
        let full = path(relative)
        guard FileManager.default.createFile(atPath: full, contents: data) else {
            throw PackageError(.io, "cannot write \(full): \(String(cString: strerror(errno)))")
        }
        chmod(full, mode)
    }

    func write(_ text: String, to relative: String, mode: mode_t = 0o644) throws {
        try write(Data(text.utf8), to: relative, mode: mode)
    }

    func copy(_ source: String, to relative: String, mode: mode_t) throws {
        try makeFolder((relative as NSString).deletingLastPathComponent)
        do {
            try FileManager.default.copyItem(atPath: source, toPath: path(relative))
        } catch {
            throw PackageError(.io, "cannot copy \(source): \(error.localizedDescription)")
        }
        chmod(path(relative), mode)
    }

    /// A symbolic link at `relative` pointing to `target` (relative to its folder).
    func link(_ relative: String, to target: String) throws {
        try makeFolder((relative as NSString).deletingLastPathComponent)
        guard symlink(target, path(relative)) == 0 else {
            throw PackageError(.io, "cannot link \(path(relative)): \(String(cString: strerror(errno)))")
        }
    }

    /// `gzip -9n`: no name, no time, so the bytes depend on the text alone.
    func writeGzip(_ text: String, to relative: String, scratch: String) throws {
        try write(text, to: relative)
        _ = try ToolRun(tool: "gzip", arguments: ["-9n", path(relative)], timeout: .seconds(60)).run(scratch: scratch)
    }

    /// Every path below the root, relative, sorted by bytes, without `DEBIAN/`.
    func contents() -> [(relative: String, isDirectory: Bool, isFile: Bool, size: Int64)] {
        var found: [(String, Bool, Bool, Int64)] = []
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            if relative == "DEBIAN" || relative.hasPrefix("DEBIAN/") { continue }
            var st = stat()
            guard lstat(path(relative), &st) == 0 else { continue }
            found.append((relative, st.st_mode & S_IFMT == S_IFDIR, st.st_mode & S_IFMT == S_IFREG, Int64(st.st_size)))
        }
        return found.sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
    }

    /// Installed-Size as dpkg-gencontrol computes it: each file's and link's size in 1 KiB
    /// units, rounded up, and 1 KiB for every other object (deb-substvars(5)).
    func installedSizeKiB() -> Int64 {
        contents().reduce(0) { sum, entry in sum + (entry.isDirectory ? 1 : max(1, (entry.size + 1023) / 1024)) }
    }

    /// `DEBIAN/md5sums`: one line per regular file (no folders, no links), as dpkg checks
    /// them (`dpkg --verify`); conffiles left out, as dh_md5sums does (dpkg keeps their
    /// hashes itself).
    func md5sums(excluding conffiles: Set<String> = []) throws -> String {
        try contents().filter { $0.isFile && !conffiles.contains("/" + $0.relative) }.map { entry in
            let digest: String
            do {
                digest = try Digest.hex(.md5, ofFileAt: path(entry.relative))
            } catch {
                throw PackageError(.io, "cannot read \(path(entry.relative)): \(error)")
            }
            return "\(digest)  \(entry.relative)\n"
        }.joined()
    }
}

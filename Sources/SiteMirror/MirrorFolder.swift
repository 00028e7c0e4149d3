import ClientFoundation
import Foundation

/// The mirror's folder and where each of the origin's files goes in it: the origin's path
/// under the folder (`http://origin/releases/stable/v1.2.0.tar.gz` →
/// `<folder>/releases/stable/v1.2.0.tar.gz`), so a URL relative to the manifest resolves
/// to the same file on both. Files of a run are written into one staging folder inside
/// it and renamed into place only at the end of a run that verified everything.
struct MirrorFolder {
    /// The folder (absolute, no trailing `/`).
    let root: String
    /// The origin's URL of the manifest.
    let manifestURL: URL

    /// The prefix of a run's staging folder, in ``root``.
    static let stagingPrefix = ".mirror-staging-"

    /// Where the origin's `url` goes, or why it cannot be mirrored: it must be on the
    /// manifest's origin (scheme, host, port), without query or fragment, and every part of
    /// its path a plain name (nothing hidden, no `.` or `..`).
    func local(_ url: URL) -> Result<String, SiteMirrorError> {
        func refuse(_ why: String) -> Result<String, SiteMirrorError> {
            .failure(SiteMirrorError(.refused, "\(url.absoluteString) cannot be mirrored: \(why)"))
        }
        guard url.scheme?.lowercased() == manifestURL.scheme?.lowercased(), url.host?.lowercased() == manifestURL.host?.lowercased(),
            url.port == manifestURL.port
        else { return refuse("it is on another origin than the manifest (\(manifestURL.absoluteString))") }
        guard url.query == nil, url.fragment == nil else { return refuse("it has a query or a fragment") }
        let parts = url.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !parts.isEmpty, parts.count <= 32 else { return refuse("its path has no file name or too many parts") }
        for part in parts {
            guard !part.isEmpty, !part.hasPrefix("."), part.utf8.count <= 255,
                !part.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "\\" })
            else { return refuse("its path has an empty or hidden part, '.', '..' or a control character") }
        }
        return .success(root + "/" + parts.joined(separator: "/"))
    }

    /// The local path of `relative` resolved against the manifest's URL.
    func local(relative: String) -> Result<String, SiteMirrorError> {
        guard let url = URL(string: relative, relativeTo: manifestURL)?.absoluteURL else {
            return .failure(SiteMirrorError(.refused, "\"\(relative)\" is not a URL relative to \(manifestURL.absoluteString)"))
        }
        return local(url)
    }

    /// `path` relative to ``root``, for messages and results.
    func relative(_ path: String) -> String {
        path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
    }

    /// The first part of `path` below ``root`` that is a symbolic link (`path` itself
    /// included), nil when none is, when `path` is not in the folder, or from where on it
    /// does not exist. The folder itself may be a link: the operator names it with `--to`.
    func link(on path: String) -> String? {
        guard path.hasPrefix(root + "/") else { return nil }
        var current = root
        for part in path.dropFirst(root.count + 1).split(separator: "/") {
            current += "/" + part
            var st = stat()
            guard lstat(current, &st) == 0 else { return nil }
            if st.st_mode & S_IFMT == S_IFLNK { return current }
        }
        return nil
    }

    /// Refuses a run that would read, write or remove any of `paths` through a symbolic
    /// link inside the folder: a rename would land, and a prune delete, wherever it points.
    /// - Throws: ``SiteMirrorError`` `.link` naming the link.
    func refuseLinks(_ paths: [String]) throws {
        for path in paths {
            guard let link = link(on: path) else { continue }
            throw SiteMirrorError(
                .link,
                "\(link) is a symbolic link inside the mirror's folder \(root): the mirror writes and prunes only the folder's own files "
                    + "and folders, never through a link; remove it (nothing was written)")
        }
    }

    /// Removes staging folders of runs that were killed (called under the folder's lock).
    func removeStaleStaging() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for name in names where name.hasPrefix(Self.stagingPrefix) { try? AtomicFile.removeTree(root + "/" + name) }
    }
}

/// One run's staging folder: every file the run fetched or rebuilt, each verified before it
/// is staged, then renamed into place in order (``commit(_:)``).
final class MirrorStaging: @unchecked Sendable {
    // @unchecked: used by one run, from one task at a time.
    let path: String
    private var counter = 0

    init(in folder: MirrorFolder) throws {
        path = folder.root + "/" + MirrorFolder.stagingPrefix + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard mkdir(path, 0o700) == 0 else { throw SiteMirrorError.io("cannot create", path: path, errno: errno) }
    }

    /// A new file name in the staging folder.
    func newName() -> String {
        counter += 1
        return path + "/\(counter)"
    }

    /// Stages `data` (already verified) as a new file readable by a web server.
    func stage(_ data: Data) throws -> String {
        let name = newName()
        let fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SiteMirrorError.io("cannot create", path: name, errno: errno) }
        defer { close(fd) }
        do {
            try AtomicFile.writeAll(fd: fd, data: data, path: name)
        } catch let error as any ClientctlError {
            throw SiteMirrorError(.io, error.message)
        }
        guard fsync(fd) == 0 else { throw SiteMirrorError.io("cannot fsync", path: name, errno: errno) }
        return name
    }

    /// Renames each staged file to its place, in the order given (the manifest last), creating
    /// folders as needed, then syncs the folders it wrote in.
    func commit(_ moves: [(staged: String, target: String)]) throws {
        var folders: [String] = []
        for move in moves {
            let folder = (move.target as NSString).deletingLastPathComponent
            if !folders.contains(folder) {
                do {
                    try AtomicFile.makeDirectory(folder)
                } catch let error as any ClientctlError {
                    throw SiteMirrorError(.io, error.message)
                }
                folders.append(folder)
            }
            chmod(move.staged, 0o644)
            guard rename(move.staged, move.target) == 0 else {
                throw SiteMirrorError.io("cannot rename \(move.staged) to", path: move.target, errno: errno)
            }
        }
        for folder in folders { try? AtomicFile.syncDirectory(folder) }
    }

    /// Removes the staging folder and whatever is left in it.
    func remove() { try? AtomicFile.removeTree(path) }
}

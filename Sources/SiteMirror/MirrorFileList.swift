import ClientFoundation
import ClientUpdater
import Foundation
import SafeArchive
import SignedManifest

/// A release's file list and objects (docs/site-mirror.md#file-lists-and-objects): what a
/// device of the site takes on the per-file path of a delta update.
extension MirrorRun {
    /// Mirrors `release`'s file list (its signed size and SHA-256, fetched from the origin
    /// once) and the objects a device holding one of `bases` or the release before this one
    /// downloads on the per-file path: the files of the list whose digest is not in that
    /// release's list. Each object is written
    /// from the release's verified archive at `archive` (held, rebuilt or downloaded) and
    /// checked against the list's SHA-256 and size; only one the archive does not give is
    /// fetched from the origin. A list or object that does not verify is noted and not
    /// mirrored (devices then take it from the origin, or the patch or the archive).
    mutating func mirrorFileList(_ release: Manifest, archive: String?, known: [Version: Manifest], bases: Set<Version>) async throws {
        guard case .success(let delta)? = release.delta, let files = delta.files,
            let list = try await fileList(files, of: release)
        else { return }
        // Every object the list names is kept while a carried release names it.
        var objectPaths: [String: String] = [:]
        for file in list.files where objectPaths[file.sha256] == nil {
            switch folder.local(relative: files.objects + file.sha256) {
            case .success(let path): objectPaths[file.sha256] = path
            case .failure(let why):
                report.notes.append("release \(release.version): objects \(files.objects): \(why.message); devices fetch them from there")
                return
            }
        }
        named.formUnion(objectPaths.values)
        // What a device on each base downloads: the files whose digest the base's list lacks.
        // The bases: the releases the site runs, and the release before this one (so a run
        // after the manifest moved still completes what an earlier run could not).
        var wanted: [String: Int64] = [:]
        let previous = known.keys.filter { $0 < release.version }.max()
        for base in bases.union(previous.map { [$0] } ?? []).sorted() where base < release.version {
            guard let baseRelease = known[base], case .success(let baseDelta)? = baseRelease.delta, let baseFiles = baseDelta.files else {
                report.notes.append("release \(release.version): release \(base) has no file list: no objects mirrored for devices on it")
                continue
            }
            guard let baseList = try await fileList(baseFiles, of: baseRelease) else { continue }
            let held = Set(baseList.files.map(\.sha256))
            for file in list.files where !held.contains(file.sha256) { wanted[file.sha256] = file.size }
        }
        var missing: [String: Int64] = [:]
        for (sha, size) in wanted {
            guard let path = objectPaths[sha], !moves.contains(where: { $0.target == path }) else { continue }
            if await !holds(path, size: size, sha256: sha) { missing[sha] = size }
        }
        guard !missing.isEmpty else { return }
        if let archive {
            for (sha, staged) in await makeObjects(missing, from: archive, release: release) {
                guard let path = objectPaths[sha] else { continue }
                moves.append((staged, path))
                missing[sha] = nil
            }
        }
        for (sha, size) in missing.sorted(by: { $0.key < $1.key }) {
            guard let path = objectPaths[sha] else { continue }
            do {
                let staged = try await download(try url(files.objects + sha), size: size, sha256: sha)
                moves.append((staged, path))
            } catch let error as UpdaterError {
                report.notes.append("release \(release.version): object \(sha) refused (\(error.message)): not mirrored")
            }
        }
    }

    /// The release's file list, held or fetched (its signed size and SHA-256) and parsed as a
    /// device parses it; nil, with a note, when it cannot be mirrored. Read once per run.
    mutating func fileList(_ files: ReleaseDelta.Files, of release: Manifest) async throws -> ReleaseFileList? {
        if let read = fileLists[files.sha256] { return read }
        let list = try await readFileList(files, of: release)
        fileLists[files.sha256] = .some(list)
        return list
    }

    private mutating func readFileList(_ files: ReleaseDelta.Files, of release: Manifest) async throws -> ReleaseFileList? {
        let listURL = try url(files.url)
        let path: String
        switch folder.local(listURL) {
        case .success(let local): path = local
        case .failure(let why):
            report.notes.append("release \(release.version): \(why.message); devices fetch it from there")
            return nil
        }
        named.insert(path)
        let limits = mirror.limits
        guard files.size <= Int64(limits.maxEntries) * 2048 + 4096 else {
            report.notes.append("release \(release.version): its \(files.size)-byte file list is over a device's cap: not mirrored")
            return nil
        }
        var source = path
        var staged: String?
        if await !holds(path, size: files.size, sha256: files.sha256) {
            do {
                let name = try await download(listURL, size: files.size, sha256: files.sha256)
                staged = name
                source = name
            } catch let error as UpdaterError {
                report.notes.append("release \(release.version): file list \(files.url) refused (\(error.message)): not mirrored")
                return nil
            }
        }
        guard let bytes = FileManager.default.contents(atPath: source) else {
            throw SiteMirrorError(.io, "cannot read \(source)")
        }
        let problem: String
        switch ReleaseFileList.parse([UInt8](bytes), maxFiles: limits.maxEntries) {
        case .success(let list) where list.files.count == files.count:
            if let staged { moves.append((staged, path)) }
            return list
        case .success(let list): problem = "it has \(list.files.count) files, the manifest signs \(files.count)"
        case .failure(let rejection): problem = rejection.message
        }
        report.notes.append("release \(release.version): file list \(files.url) is not one a device takes (\(problem)): not mirrored")
        return nil
    }

    /// The objects of `missing` (SHA-256 → size) the release's verified archive gives: it
    /// is unpacked under a device's entry rule and caps, and each file of a wanted size
    /// hashed; one with a wanted SHA-256 and size is staged. Returns SHA-256 → staged file;
    /// what the archive does not give (or an archive that does not unpack) is left to fetch.
    private mutating func makeObjects(_ missing: [String: Int64], from archive: String, release: Manifest) async -> [String: String] {
        let staging = self.staging
        let work = staging.newName()
        let limits = mirror.limits
        do {
            return try await BlockingExecutor.run {
                guard mkdir(work, 0o700) == 0 else { throw SiteMirrorError.io("cannot create", path: work, errno: errno) }
                defer { try? AtomicFile.removeTree(work) }
                let fd = open(archive, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
                guard fd >= 0 else { throw SiteMirrorError.io("cannot open", path: archive, errno: errno) }
                defer { close(fd) }
                _ = try SafeExtractor(limits: limits).extract(fileDescriptor: fd, into: work + "/tree")
                let sizes = Set(missing.values)
                var made: [String: String] = [:]
                for entry in try SourceTree.scan(work + "/tree", includeHidden: true).entries where !entry.isDirectory && sizes.contains(entry.size) {
                    let file = work + "/tree/" + entry.path
                    var st = stat()
                    guard lstat(file, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
                    let sha = try Digest.hex(.sha256, ofFileAt: file)
                    guard missing[sha] == Int64(st.st_size), made[sha] == nil else { continue }
                    let name = staging.newName()
                    guard rename(file, name) == 0 else { throw SiteMirrorError.io("cannot rename \(file) to", path: name, errno: errno) }
                    chmod(name, 0o644)
                    made[sha] = name
                }
                return made
            }
        } catch {
            let message = (error as? any ClientctlError)?.message ?? "\(error)"
            report.notes.append("release \(release.version): objects not made from its archive (\(message)); fetching them from the origin")
            return [:]
        }
    }
}

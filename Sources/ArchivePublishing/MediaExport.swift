import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// What `clientctl export` is asked to write (docs/offline-media.md).
package struct MediaExportRequest: Sendable, Equatable {
    /// The release folder root (as given to `publish --out`).
    package var releases: String
    package var channel: String
    /// The media's folder (a stick's mount point): `clientctl-media/<app>/<channel>/` is
    /// written in it; the other apps and channels already there are left as they are.
    package var destination: String
    /// Older releases of the channel to carry besides the current one and those it offers
    /// alongside or pins (each in `index.json`).
    package var versions: [Version]
    /// Until when the media vouches for its releases; nil: the manifests' own `expires`.
    package var offlineExpires: Date?
    /// The export's time (signed as `exported`).
    package var now: Date

    package init(releases: String, channel: String, destination: String, versions: [Version] = [], offlineExpires: Date? = nil, now: Date) {
        self.releases = releases
        self.channel = channel
        self.destination = destination
        self.versions = versions
        self.offlineExpires = offlineExpires
        self.now = now
    }
}

/// What an export wrote.
package struct MediaExportResult: Sendable, Equatable {
    /// The channel's media folder (`<destination>/clientctl-media/<app>/<channel>`).
    package var folder: String
    package var index: MediaIndex
    /// The bytes of every file listed.
    package var bytes: Int64
}

/// Writes a channel's signed releases to offline media (`clientctl export`): the trust
/// roots, the manifest, `index.json`, the rollout role's restriction, the archives and
/// patches of the releases carried and the cohort files their targets read, and a
/// `media.json` signed by the release role that lists each file's size and SHA-256. The
/// channel's folder on the media is replaced as a whole: written beside it, then renamed
/// into place, so a stick pulled out half-way holds the old export or none, never a mix.
package enum MediaExport {
    /// Exports and returns what was written.
    /// - Throws: `ArchivePublishingError` `.notFound` without a manifest or for a version
    ///   not in `index.json`, `.untrustedKey`/`.thresholdNotMet` for signers that are not
    ///   enough release keys, `.invalidArgument` for an `offlineExpires` in the past or
    ///   after the trust root's expiry, `.io` when the media cannot be written (a full
    ///   stick): nothing is left half-written.
    package static func export(_ request: MediaExportRequest, signers: [any DocumentSigner]) async throws -> MediaExportResult {
        let folder = request.releases + "/" + request.channel
        let manifestPath = folder + "/manifest.json"
        guard let manifestData = FileManager.default.contents(atPath: manifestPath) else {
            throw ArchivePublishingError(.notFound, "\(manifestPath) does not exist: publish a release on channel \(request.channel) first")
        }
        let lock = try DirectoryLock(folder)
        defer { lock.release() }
        let manifest = try Manifest.validate(try StrictJSON.parseObject(manifestData, limits: .manifest, source: manifestPath))
            .mapError { $0.error(context: manifestPath) }.get()
        let root = try ReleaseRoots.newest(inChannelFolder: folder)
        try ReleaseRoots.requireThreshold(of: root, signers: signers)
        if let until = request.offlineExpires {
            guard until > request.now else {
                throw ArchivePublishingError(.invalidArgument, "--offline-expires \(RFC3339.format(until)) is not in the future")
            }
            if let root, let limit = root.expires, until > limit {
                throw ArchivePublishingError(
                    .invalidArgument,
                    "--offline-expires \(RFC3339.format(until)) is after trust root \(root.version)'s expiry (\(RFC3339.format(limit))): "
                        + "renew the root first (clientctl root sign)")
            }
        }
        if request.offlineExpires == nil, let expires = manifest.expires, expires <= request.now {
            throw ArchivePublishingError(
                .invalidArgument,
                "release \(manifest.version) expired at \(RFC3339.format(expires)): devices would refuse the media; "
                    + "publish again or give --offline-expires")
        }
        let carried = try releasesCarried(manifest, folder: folder, extra: request.versions)
        var paths = ["manifest.json"]
        for name in ["index.json", "restriction.json"] where FileManager.default.fileExists(atPath: folder + "/" + name) { paths.append(name) }
        var n = 1
        while FileManager.default.fileExists(atPath: folder + "/root/\(n).json") {
            paths.append("root/\(n).json")
            n += 1
        }
        for release in carried {
            guard let archive = localPath(release.url, in: folder) else {
                throw ArchivePublishingError(.notFound, "\(folder): release \(release.version)'s archive \(release.url) is not in the folder")
            }
            paths.append(archive)
            if case .success(let delta)? = release.delta {
                paths += delta.patches.compactMap { localPath($0.url, in: folder) }
            }
            paths += release.cohorts.map(\.path)
        }
        var seen = Set<String>()
        paths = paths.filter { seen.insert($0).inserted }
        for path in paths {
            if let problem = MediaIndex.pathProblem(path) {
                throw ArchivePublishingError(.invalidManifest, "\(folder)/\(path): cannot be carried on media: the path \(problem)")
            }
        }
        let media = request.destination + "/" + MediaIndex.folder + "/" + manifest.app
        try AtomicFile.makeDirectory(request.destination + "/" + MediaIndex.folder)
        try AtomicFile.makeDirectory(media)
        let staging = media + "/.export-\(request.channel)-\(getpid())"
        try? AtomicFile.removeTree(staging)
        do {
            var files: [MediaIndex.File] = []
            var bytes: Int64 = 0
            for path in paths {
                let file = try copy(folder + "/" + path, to: staging + "/" + path, listedAs: path)
                files.append(file)
                bytes += file.size
            }
            let draft = MediaIndexDraft(
                app: manifest.app, channel: request.channel, exported: request.now, offlineExpires: request.offlineExpires,
                releases: carried.map { MediaIndex.Release(version: $0.version, manifestDigest: $0.signedDigest) }, files: files)
            let index: MediaIndex
            do {
                index = try await draft.sign(by: signers, source: staging + "/media.json")
            } catch let error as SignedManifestError where error.code == .mediaRefused {
                throw ArchivePublishingError(.invalidArgument, error.message)
            }
            try AtomicFile.write(Data(index.jsonBytes()), to: staging + "/media.json")
            let target = media + "/" + request.channel
            let old = media + "/.replaced-\(request.channel)-\(getpid())"
            if FileManager.default.fileExists(atPath: target) {
                guard rename(target, old) == 0 else { throw ioError("cannot move aside", path: target, errno: errno) }
            }
            guard rename(staging, target) == 0 else {
                let code = errno
                _ = rename(old, target)
                throw ioError("cannot rename \(staging) to", path: target, errno: code)
            }
            try? AtomicFile.removeTree(old)
            try? AtomicFile.syncDirectory(media)
            return MediaExportResult(folder: target, index: index, bytes: bytes)
        } catch {
            try? AtomicFile.removeTree(staging)
            throw error
        }
    }

    /// Where in the channel's folder the file a release names by `url` is: the relative
    /// URL itself, or for an absolute one (`publish --base-url`) the shortest end of its
    /// path that is a file of the folder. nil when there is none.
    private static func localPath(_ url: String, in folder: String) -> String? {
        guard let parsed = URL(string: url), parsed.scheme != nil else {
            return FileManager.default.fileExists(atPath: folder + "/" + url) ? url : nil
        }
        let parts = parsed.path.split(separator: "/").map(String.init)
        for count in 1...max(1, min(parts.count, 8)) where count <= parts.count {
            let candidate = parts.suffix(count).joined(separator: "/")
            if FileManager.default.fileExists(atPath: folder + "/" + candidate) { return candidate }
        }
        return nil
    }

    /// The current release, those it offers alongside or pins, and `extra`, each verified
    /// as a manifest of `index.json` (the current one from `manifest.json`), newest first.
    private static func releasesCarried(_ manifest: Manifest, folder: String, extra: [Version]) throws -> [Manifest] {
        let wanted = Set(manifest.alongside.map(\.version) + manifest.pins.map(\.release.version) + extra).subtracting([manifest.version])
        guard !wanted.isEmpty else { return [manifest] }
        let indexPath = folder + "/index.json"
        guard let data = FileManager.default.contents(atPath: indexPath) else {
            throw ArchivePublishingError(.notFound, "\(indexPath) does not exist: the versions to carry cannot be found")
        }
        let index = try ReleaseIndex.parse(data, source: indexPath)
        var found: [Version: Manifest] = [:]
        for object in index.releases {
            guard case .success(let m) = Manifest.validate(object), wanted.contains(m.version), found[m.version] == nil else { continue }
            found[m.version] = m
        }
        if let missing = wanted.sorted().first(where: { found[$0] == nil }) {
            throw ArchivePublishingError(.notFound, "\(indexPath) has no release \(missing) of channel \(manifest.channel): nothing exported")
        }
        return [manifest] + found.values.sorted { $0.version > $1.version }
    }

    /// Copies one regular file of the release folder to the media, hashing what it wrote.
    private static func copy(_ source: String, to target: String, listedAs path: String) throws -> MediaIndex.File {
        var info = stat()
        guard lstat(source, &info) == 0 else {
            throw ArchivePublishingError(.notFound, "\(source) does not exist: the release folder lacks a file its releases name")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ArchivePublishingError(.sourceRejected, "\(source) is not a regular file: only files publish wrote are exported")
        }
        try AtomicFile.makeDirectory((target as NSString).deletingLastPathComponent)
        let input = open(source, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard input >= 0 else { throw ioError("cannot open", path: source, errno: errno) }
        defer { close(input) }
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw ioError("cannot create", path: target, errno: errno) }
        defer { close(output) }
        let hasher = Digest(.sha256)
        var size: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(input, buffer.baseAddress, buffer.count)
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw ioError("cannot read", path: source, errno: errno) }
            if n == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            var written = 0
            while written < n {
                let w = write(output, chunk.baseAddress?.advanced(by: written), n - written)
                if w < 0, errno == EINTR { continue }
                guard w > 0 else { throw ioError("cannot write", path: target, errno: errno) }
                written += w
            }
            hasher.update(chunk)
            size += Int64(n)
        }
        guard fsync(output) == 0 else { throw ioError("cannot write", path: target, errno: errno) }
        return MediaIndex.File(path: path, size: size, sha256: hasher.finalizeHex())
    }
}

/// An `.io` error of a failed system call, `errno` decoded.
private func ioError(_ what: String, path: String, errno code: Int32) -> ArchivePublishingError {
    ArchivePublishingError(.io, "\(what) \(path): \(String(cString: strerror(code)))")
}

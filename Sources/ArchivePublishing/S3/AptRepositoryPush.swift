import ClientFoundation
import Foundation

/// What `clientctl repo push` did.
public struct AptPushReport: Sendable, Equatable {
    /// Objects written, as keys below the prefix.
    public var uploaded: [String] = []
    /// Objects the store already held with the same bytes.
    public var unchanged: [String] = []
    /// The suites whose `InRelease` the store now holds as the folder has it.
    public var suites: [String] = []
}

/// `clientctl repo push`: uploads an apt repository (`dists/` and `pool/` of a folder
/// `clientctl repo` keeps) to S3-compatible storage in the order that keeps every apt client
/// consistent (docs/packaging.md#pushing-the-repository-clientctl-repo-push).
///
/// 1. Pool files and by-hash indexes first: their bytes never change under their name (a
///    pool file is named by package and version, a by-hash index by its SHA-256). Each is
///    written only if absent (`If-None-Match: *`), cached forever; the store holding one
///    with other bytes is refused, as a pushed archive is.
/// 2. Then every other file of `dists/` but the Release files (the indexes at their plain
///    names), replaced when their bytes differ, cached for ``indexMaxAge`` seconds.
/// 3. Last, each suite's `Release`, `Release.gpg` and `InRelease`, read back after writing.
///
/// An apt client that reads the new `InRelease` therefore finds every index (by hash) and
/// every package it names; one that read the previous `InRelease` still finds the indexes
/// it names, since nothing is deleted. The folder's `conf/` and `db/` (reprepro's own) are
/// never uploaded.
public struct AptRepositoryPush: Sendable {
    package let client: S3Client
    /// `Cache-Control` max-age of what a push replaces: `Release`, `InRelease` and the
    /// indexes at their plain names. An upload reaches apt clients behind a CDN after this.
    public var indexMaxAge = 60
    /// Files of the folder a push will upload at most (a bound on a folder that is not a
    /// repository's).
    public static let maxFiles = 200_000

    /// Pushes to `location` (see ``S3Location/resolve(_:endpoint:region:environment:)``).
    public init(location: S3Location) { self.init(client: S3Client(location: location)) }

    package init(client: S3Client) { self.client = client }

    /// Uploads `folder`'s `pool/` and `dists/` (see the type's steps).
    /// - Throws: ``ArchivePublishingError``: `.notFound` (no `dists/`), `.sourceRejected` (a
    ///   file that is not a regular file), `.conflict` (a pool file or by-hash index the store
    ///   holds with other bytes: nothing after it was written), `.storageWriteLost`, and the
    ///   store's own errors.
    public func push(folder: String) async throws -> AptPushReport {
        let files = try await BlockingExecutor.run { try Self.files(of: folder) }
        var report = AptPushReport()
        let writer = ReleasePush(client: client)
        for path in files.immutable {
            if try await writer.uploadImmutable(path, path: folder + "/" + path) {
                report.uploaded.append(path)
            } else {
                report.unchanged.append(path)
            }
        }
        for path in files.indexes {
            if try await replace(path, from: folder) { report.uploaded.append(path) } else { report.unchanged.append(path) }
        }
        for (suite, paths) in files.releases {
            for path in paths {
                if try await replace(path, from: folder) { report.uploaded.append(path) } else { report.unchanged.append(path) }
            }
            report.suites.append(suite)
        }
        return report
    }

    /// Writes `path` with the index lifetime unless the store holds its bytes already,
    /// then reads it back; returns whether it wrote.
    func replace(_ path: String, from folder: String) async throws -> Bool {
        let body = try await BlockingExecutor.run { () throws -> Data in
            guard let body = FileManager.default.contents(atPath: folder + "/" + path) else {
                throw ArchivePublishingError(.notFound, "cannot read \(folder)/\(path)")
            }
            return body
        }
        let sha = Digest.hex(.sha256, of: body)
        if try await client.head(path).sha256 == sha { return false }
        let headers = ["Cache-Control": "public, max-age=\(indexMaxAge)", "Content-Type": Self.contentType(path)]
        let put = try await client.put(path, body: body, headers: headers)
        guard (200..<300).contains(put.status) else {
            throw ReleasePush(client: client).notWritten(path, put, "apt clients still see the repository as it was before this file")
        }
        guard try await client.head(path).sha256 == sha else {
            throw ArchivePublishingError(
                .storageWriteLost, "\(client.name(path)) does not hold what was just written: the store lost the write; push again")
        }
        return true
    }

    /// The folder's files by step: immutable (pool, by-hash), indexes, and per suite its
    /// Release files in writing order (`Release`, `Release.gpg`, `InRelease`).
    static func files(of folder: String) throws -> (immutable: [String], indexes: [String], releases: [(String, [String])]) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder + "/dists", isDirectory: &isFolder), isFolder.boolValue else {
            throw ArchivePublishingError(.notFound, "\(folder) has no dists/: not an apt repository (clientctl repo add makes one)")
        }
        var immutable: [String] = []
        var indexes: [String] = []
        var releases: [String: [String]] = [:]
        for top in ["pool", "dists"] {
            for path in try walk(folder, top) {
                let parts = path.split(separator: "/").map(String.init)
                if top == "pool" || parts.contains("by-hash") {
                    immutable.append(path)
                } else if parts.count == 3, ["Release", "Release.gpg", "InRelease"].contains(parts[2]) {
                    releases[parts[1], default: []].append(path)
                } else {
                    indexes.append(path)
                }
            }
        }
        let order = ["Release", "Release.gpg", "InRelease"]
        let suites = releases.keys.sorted().map { suite in
            (
                suite,
                (releases[suite] ?? []).sorted { a, b in
                    (order.firstIndex(of: (a as NSString).lastPathComponent) ?? 0) < (order.firstIndex(of: (b as NSString).lastPathComponent) ?? 0)
                }
            )
        }
        for (suite, paths) in suites where !paths.contains("dists/\(suite)/InRelease") {
            throw ArchivePublishingError(
                .invalidManifest, "\(folder)/dists/\(suite) has no InRelease: sign the repository first (clientctl repo sign)")
        }
        return (immutable.sorted(), indexes.sorted(), suites)
    }

    /// Every regular file below `folder/top`, relative to `folder`; refuses anything else
    /// (a link could name a file outside the repository).
    static func walk(_ folder: String, _ top: String) throws -> [String] {
        var found: [String] = []
        var pending = [top]
        while let relative = pending.popLast() {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + relative)) ?? []
            for name in names.sorted() {
                let path = relative + "/" + name
                var st = stat()
                guard lstat(folder + "/" + path, &st) == 0 else { throw ArchivePublishingError(.io, "cannot read \(folder)/\(path)") }
                switch st.st_mode & S_IFMT {
                case S_IFDIR: pending.append(path)
                case S_IFREG: found.append(path)
                default: throw ArchivePublishingError(.sourceRejected, "\(folder)/\(path) is not a regular file: refused, nothing was uploaded")
                }
                guard found.count <= maxFiles else {
                    throw ArchivePublishingError(.archiveLimit, "\(folder) holds more than \(maxFiles) files: not a repository clientctl repo keeps")
                }
            }
        }
        return found
    }

    /// The `Content-Type` of a repository file.
    static func contentType(_ path: String) -> String {
        let name = (path as NSString).lastPathComponent
        if name == "Release.gpg" { return "application/pgp-signature" }
        if ["Release", "InRelease", "Packages", "Sources", "Contents"].contains(name) { return "text/plain; charset=utf-8" }
        return ReleasePush.contentType(path)
    }
}

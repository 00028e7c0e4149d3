import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// What a push did for one channel.
public struct PushReport: Sendable, Equatable {
    public var channel: String
    /// Immutable objects written (archives, trust roots), as keys below the prefix.
    public var uploaded: [String] = []
    /// Immutable objects the store already held with the same bytes.
    public var unchanged: [String] = []
    /// Versions new to the store, and versions whose signed copy was replaced.
    public var added: [Version] = []
    public var updated: [Version] = []
    /// The version `manifest.json` names after the push.
    public var current: Version?
    /// Whether `index.json` / `manifest.json` were written (false: already up to date).
    public var wroteIndex = false
    public var wroteManifest = false
    /// Rounds of the pointer step (more than 1 when another push changed them meanwhile).
    public var rounds = 0
    /// With `--keep`: releases taken out of `index.json`, and keys deleted below the channel.
    public var removed: [Version] = []
    public var deleted: [String] = []
}

/// `clientctl push`: uploads a release folder to S3-compatible storage so that devices
/// never see half a release (docs/formats.md#push).
///
/// Per channel: immutable objects first (archives and `root/N.json`, each `PUT` with
/// `If-None-Match: *`: an object the store holds with the same bytes is left alone, with
/// other bytes refused); then `index.json`, then `manifest.json`, each `PUT` with `If-Match`
/// on the ETag read (or `If-None-Match: *` when absent). A `412` (or S3's `409` for a
/// concurrent conditional write) means another push won: re-read both, re-merge with
/// `ChannelMerge` (version rules checked again) and retry, a bounded number of rounds.
public struct ReleasePush: Sendable {
    package let client: S3Client
    /// `Cache-Control` of `manifest.json` and `index.json`: how long a CDN or device may
    /// reuse them without asking (a rollout edit or revocation reaches devices after this).
    public var pointerMaxAge = 60
    /// Rounds of the pointer step before giving up with `.contended`.
    public var pointerRounds = 20
    /// `--keep N`: after the pointers, keep only the newest N releases in `index.json` and
    /// delete what no kept release names (``ChannelPrune``); nil: delete nothing.
    public var keep: Int?
    /// Objects younger than this are never deleted: another push may have uploaded them
    /// for a release whose pointers it has not written yet.
    public var pruneGrace: TimeInterval = 3_600

    /// `Cache-Control` of archives and trust roots: never change, cache forever.
    public static let immutableCacheControl = "public, max-age=31536000, immutable"

    /// Pushes to `location` (see ``S3Location/resolve(_:endpoint:region:environment:)``).
    public init(location: S3Location) { self.init(client: S3Client(location: location)) }

    package init(client: S3Client) { self.client = client }

    /// The channels of a release folder: its sub-folders holding an `index.json`.
    public static func channels(in folder: String) throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw ArchivePublishingError(.notFound, "\(folder) is not a readable release folder")
        }
        let found = names.filter { !$0.hasPrefix(".") && FileManager.default.fileExists(atPath: "\(folder)/\($0)/index.json") }.sorted()
        guard !found.isEmpty else { throw ArchivePublishingError(.notFound, "\(folder) holds no channel (no CHANNEL/index.json): publish first") }
        return found
    }

    /// Pushes one channel folder (`folder/channel`).
    public func push(folder: String, channel: String) async throws -> PushReport {
        let dir = folder + "/" + channel
        // Reading the folder (whole archives, to hash and upload) runs on the BlockingExecutor (docs/concurrency.md).
        var local = try await BlockingExecutor.run { try localSide(dir) }
        if let keep, let index = local.index {
            // Releases this push would prune are not offered to the store at all (they would
            // be refused as older than its newest once it has pruned them).
            local.index = ChannelPrune.trim(index, keep: keep, manifest: local.manifest).0
        }
        var report = PushReport(channel: channel)
        // The version rules first, so a refused push uploads nothing (an archive left
        // behind would block a later release of that version with other bytes).
        _ = try ChannelMerge.merge(remote: try await readPointers(channel).side, local: local)
        var immutable = try await BlockingExecutor.run { try ImmutableFiles.list(channelFolder: dir, channel: channel) }
        if keep != nil {
            // What only the releases this push prunes need is not uploaded just to be deleted.
            let releases = (local.index?.releases ?? []) + (local.manifest.map { [$0] } ?? [])
            let (needed, complete) = await ChannelPrune.needed(by: releases) { ChannelPrune.readList(dir + "/" + $0) }
            immutable.removeAll { file in
                let path = String(file.key.dropFirst(channel.count + 1))
                return ChannelPrune.isPrunable(path, objects: complete) && !needed.contains(path)
            }
        }
        for (key, path) in immutable {
            if try await uploadImmutable(key, path: path) { report.uploaded.append(key) } else { report.unchanged.append(key) }
        }
        try await pushPointers(channel: channel, local: local, report: &report)
        if try await pushRestriction(channel: channel, folder: dir) { report.uploaded.append(channel + "/restriction.json") }
        if keep != nil { try await pruneRemote(channel: channel, folder: dir, report: &report) }
        return report
    }

    /// Deletes the channel's archives, patches, file lists and objects that no release in
    /// the store's `index.json` (or its `manifest.json`) names and that are older than
    /// ``pruneGrace``. File lists are read from the folder when it has them, else from the store.
    func pruneRemote(channel: String, folder: String, report: inout PushReport) async throws {
        let (side, _, _) = try await readPointers(channel)
        let releases = (side.index?.releases ?? []) + (side.manifest.map { [$0] } ?? [])
        let client = self.client
        let signed = Self.signedFileLists(releases)
        let (needed, complete) = try await ChannelPrune.needed(by: releases) { path in
            if let list = ChannelPrune.readList(folder + "/" + path) { return list }
            // Read no more than the signed size; other bytes are not that list (keep everything).
            guard let files = signed[path], (0...Int64(S3Client.fileListLimit)).contains(files.size) else { return nil }
            let reply = try await client.read(channel + "/" + path, limit: Int(files.size))
            guard reply.status == 200, reply.complete, Digest.hex(.sha256, of: reply.body) == files.sha256 else { return nil }
            return try? ReleaseFileList.parse([UInt8](reply.body), maxFiles: files.count).get()
        }
        let cutoff = Date().addingTimeInterval(-pruneGrace)
        let objects: [S3Client.Listed]
        do {
            objects = try await client.list(channel + "/")
        } catch let error as ArchivePublishingError {
            throw ArchivePublishingError(
                error.code, error.message + "; the release was pushed, nothing was pruned", underlying: error.underlying)
        }
        for object in objects {
            let path = String(object.key.dropFirst(channel.count + 1))
            guard ChannelPrune.isPrunable(path, objects: complete), !needed.contains(path) else { continue }
            guard let modified = object.lastModified, modified < cutoff else { continue }
            try await client.delete(object.key)
            report.deleted.append(object.key)
        }
    }

    /// The file lists the releases name, by channel-relative path, with their signed size
    /// and SHA-256 (a list read from the store is read no further than its signed size).
    static func signedFileLists(_ releases: [JSONObject]) -> [String: ReleaseDelta.Files] {
        var lists: [String: ReleaseDelta.Files] = [:]
        for entry in releases {
            guard let value = entry["delta"], case .success(let delta) = ReleaseDelta.parse(value, version: ChannelPrune.versionOf(entry)),
                let files = delta.files, let path = ChannelPrune.relative(files.url)
            else { continue }
            lists[path] = files
        }
        return lists
    }

    func localSide(_ dir: String) throws -> ChannelMerge.Side {
        let index = try FileManager.default.contents(atPath: dir + "/index.json").map { try ReleaseIndex.parse($0, source: dir + "/index.json") }
        let manifest = try FileManager.default.contents(atPath: dir + "/manifest.json").map {
            try StrictJSON.parseObject($0, limits: .manifest, source: dir + "/manifest.json")
        }
        return .init(index: index, manifest: manifest, name: dir)
    }

    /// Writes `key` unless the store holds it; returns whether it wrote.
    func uploadImmutable(_ key: String, path: String) async throws -> Bool {
        let (body, sha) = try await BlockingExecutor.run { () throws -> (Data, String) in
            guard let body = FileManager.default.contents(atPath: path) else { throw ArchivePublishingError(.notFound, "cannot read \(path)") }
            return (body, Digest.hex(.sha256, of: body))
        }
        let size = Int64(body.count)
        let head = try await client.head(key)
        if head.status == 200 { return try await sameBytes(key, sha: sha, size: size, head: head) }
        let put = try await client.put(
            key, body: body, headers: ["If-None-Match": "*", "Cache-Control": Self.immutableCacheControl, "Content-Type": Self.contentType(key)])
        switch put.status {
        case 200..<300: return true
        case 409, 412: return try await sameBytes(key, sha: sha, size: size, head: try await client.head(key))  // another push wrote it meanwhile
        default: throw notWritten(key, put, "nothing that names it was written")
        }
    }

    /// True when the stored `key` has `sha`; refuses other bytes.
    func sameBytes(_ key: String, sha: String, size: Int64, head: S3Client.Reply) async throws -> Bool {
        var stored = head.sha256
        if stored == nil {  // written by another tool: hash the bytes themselves, no more than this folder's
            let get = try await client.digest(key, limit: size)
            if get.status == 200 { stored = get.bodySHA256 ?? "of more than \(size) bytes" }
        }
        guard let stored else { throw ArchivePublishingError(.storageUnavailable, "\(client.name(key)) exists but cannot be read back") }
        guard stored == sha else {
            throw ArchivePublishingError(
                .conflict,
                "\(client.name(key)) exists with other bytes (sha256 \(stored), this folder has \(sha)): published objects are never replaced; publish a new version"
            )
        }
        return false
    }

    /// Every release new to the store must have its archive there (relative URLs only:
    /// an absolute URL points outside the bucket).
    func requireArchives(of merge: ChannelMerge, channel: String) async throws {
        for version in merge.added {
            guard let entry = merge.index.releases.first(where: { $0["version"]?.stringValue == version.description }),
                let url = entry["url"]?.stringValue, !url.contains(":"), !url.hasPrefix("/")
            else { continue }
            let key = channel + "/" + url
            if try await client.head(key).status != 200 {
                throw ArchivePublishingError(
                    .notFound, "release \(version) names \(url), which is neither in the folder nor in \(client.name(channel))")
            }
        }
    }

    static func contentType(_ key: String) -> String {
        if key.hasSuffix(".json") { return "application/json" }
        if key.hasSuffix(".tar.gz") { return "application/gzip" }
        if key.hasSuffix(".zip") { return "application/zip" }
        if key.hasSuffix(".tar.zst") { return "application/zstd" }
        if key.hasSuffix(".deb") { return "application/vnd.debian.binary-package" }
        if key.hasSuffix(".gz") { return "application/gzip" }
        if key.hasSuffix(".xz") { return "application/x-xz" }
        return "application/octet-stream"
    }
}

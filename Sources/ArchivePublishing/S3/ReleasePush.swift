import ClientUpdater
import Foundation
import SignedManifest

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
/// ``ChannelMerge`` (version rules checked again) and retry, a bounded number of rounds.
public struct ReleasePush: Sendable {
    public let client: S3Client
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

    public init(client: S3Client) { self.client = client }

    /// The channels of a release folder: its sub-folders holding an `index.json`.
    public static func channels(in folder: String) throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw SignedArchiveError(.notFound, "\(folder) is not a readable release folder")
        }
        let found = names.filter { !$0.hasPrefix(".") && FileManager.default.fileExists(atPath: "\(folder)/\($0)/index.json") }.sorted()
        guard !found.isEmpty else { throw SignedArchiveError(.notFound, "\(folder) holds no channel (no CHANNEL/index.json): publish first") }
        return found
    }

    /// Pushes one channel folder (`folder/channel`).
    public func push(folder: String, channel: String) async throws -> PushReport {
        let dir = folder + "/" + channel
        var local = try localSide(dir)
        if let keep, let index = local.index {
            // Releases this push would prune are not offered to the store at all (they would
            // be refused as older than its newest once it has pruned them).
            local.index = ChannelPrune.trim(index, keep: keep, manifestVersion: local.manifest.map(ChannelPrune.versionOf)).0
        }
        var report = PushReport(channel: channel)
        // The version rules first, so a refused push uploads nothing (an archive left
        // behind would block a later release of that version with other bytes).
        _ = try ChannelMerge.merge(remote: try await readPointers(channel).side, local: local)
        var immutable = try ImmutableFiles.list(channelFolder: dir, channel: channel)
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
        let (needed, complete) = try await ChannelPrune.needed(by: releases) { path in
            if let list = ChannelPrune.readList(folder + "/" + path) { return list }
            let reply = try await client.get(channel + "/" + path)
            guard reply.status == 200 else { return nil }
            return try? ReleaseFileList.parse([UInt8](reply.body), maxFiles: 10_000_000).get()
        }
        let cutoff = Date().addingTimeInterval(-pruneGrace)
        for object in try await client.list(channel + "/") {
            let path = String(object.key.dropFirst(channel.count + 1))
            guard ChannelPrune.isPrunable(path, objects: complete), !needed.contains(path) else { continue }
            guard let modified = object.lastModified, modified < cutoff else { continue }
            try await client.delete(object.key)
            report.deleted.append(object.key)
        }
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
        guard let body = FileManager.default.contents(atPath: path) else { throw SignedArchiveError(.notFound, "cannot read \(path)") }
        let sha = Digest.hex(.sha256, of: body)
        let head = try await client.get(key, head: true)
        if head.status == 200 { return try await sameBytes(key, sha: sha, head: head) }
        let put = try await client.put(
            key, body: body, headers: ["If-None-Match": "*", "Cache-Control": Self.immutableCacheControl, "Content-Type": Self.contentType(key)])
        switch put.status {
        case 200..<300: return true
        case 409, 412: return try await sameBytes(key, sha: sha, head: try await client.get(key, head: true))  // another push wrote it meanwhile
        default: throw SignedArchiveError(.storageDenied, "PUT \(client.name(key)): HTTP \(put.status)")
        }
    }

    /// True when the stored `key` has `sha`; refuses other bytes.
    func sameBytes(_ key: String, sha: String, head: S3Client.Reply) async throws -> Bool {
        var stored = head.sha256
        if stored == nil {  // written by another tool: compare the bytes themselves
            let get = try await client.get(key)
            if get.status == 200 { stored = Digest.hex(.sha256, of: get.body) }
        }
        guard let stored else { throw SignedArchiveError(.storageUnavailable, "\(client.name(key)) exists but cannot be read back") }
        guard stored == sha else {
            throw SignedArchiveError(
                .conflict,
                "\(client.name(key)) exists with other bytes (sha256 \(stored), this folder has \(sha)): published objects are never replaced; publish a new version"
            )
        }
        return false
    }

    func pushPointers(channel: String, local: ChannelMerge.Side, report: inout PushReport) async throws {
        let indexKey = channel + "/index.json"
        let manifestKey = channel + "/manifest.json"
        let headers = ["Cache-Control": "public, max-age=\(pointerMaxAge)", "Content-Type": "application/json"]
        for round in 1...max(1, pointerRounds) {
            report.rounds = round
            if round > 1 { try await Task.sleep(nanoseconds: UInt64.random(in: 20_000_000...(60_000_000 * UInt64(min(round, 10))))) }
            let (remote, manifestReply, indexReply) = try await readPointers(channel)
            var merge = try ChannelMerge.merge(remote: remote, local: local)
            try await requireArchives(of: merge, channel: channel)
            if let keep {
                (merge.index, report.removed) = ChannelPrune.trim(merge.index, keep: keep, manifestVersion: merge.manifest.version)
            }
            report.added = merge.added
            report.updated = merge.updated
            report.current = merge.manifest.version
            if remote.index != merge.index {
                let put = try await client.put(
                    indexKey, body: Data(merge.index.jsonBytes()), headers: headers.merging(Self.condition(indexReply)) { $1 })
                if put.status == 409 || put.status == 412 { continue }
                report.wroteIndex = true
            }
            if remote.manifest != merge.manifest.object {
                let put = try await client.put(
                    manifestKey, body: Data(merge.manifest.jsonBytes()), headers: headers.merging(Self.condition(manifestReply)) { $1 })
                if put.status == 409 || put.status == 412 { continue }
                report.wroteManifest = true
            }
            return
        }
        throw SignedArchiveError(
            .contended,
            "\(client.name(channel)): other pushes changed index.json or manifest.json in each of \(pointerRounds) rounds; run the push again")
    }

    /// The store's `manifest.json` and `index.json` of `channel`. The manifest is read
    /// before the index: a push that lands both after these reads changes the manifest's
    /// ETag, so a manifest write based on them fails and the round is redone.
    func readPointers(_ channel: String) async throws -> (side: ChannelMerge.Side, manifest: S3Client.Reply, index: S3Client.Reply) {
        let indexKey = channel + "/index.json"
        let manifestKey = channel + "/manifest.json"
        let manifestReply = try await client.get(manifestKey)
        let indexReply = try await client.get(indexKey)
        let side = ChannelMerge.Side(
            index: try indexReply.status == 200 ? ReleaseIndex.parse(indexReply.body, source: client.name(indexKey)) : nil,
            manifest: try manifestReply.status == 200
                ? StrictJSON.parseObject(manifestReply.body, limits: .manifest, source: client.name(manifestKey)) : nil,
            name: client.name(channel))
        return (side, manifestReply, indexReply)
    }

    /// Every release new to the store must have its archive there (relative URLs only:
    /// an absolute URL points outside the bucket).
    func requireArchives(of merge: ChannelMerge, channel: String) async throws {
        for version in merge.added {
            guard let entry = merge.index.releases.first(where: { $0["version"]?.stringValue == version.description }),
                let url = entry["url"]?.stringValue, !url.contains(":"), !url.hasPrefix("/")
            else { continue }
            let key = channel + "/" + url
            if try await client.get(key, head: true).status != 200 {
                throw SignedArchiveError(.notFound, "release \(version) names \(url), which is neither in the folder nor in \(client.name(channel))")
            }
        }
    }

    /// `If-Match` on what was read, or `If-None-Match: *` when there was nothing.
    static func condition(_ reply: S3Client.Reply) -> [String: String] {
        if reply.status == 404 { return ["If-None-Match": "*"] }
        return ["If-Match": reply.etag ?? "\"\""]
    }

    static func contentType(_ key: String) -> String {
        if key.hasSuffix(".json") { return "application/json" }
        if key.hasSuffix(".tar.gz") { return "application/gzip" }
        if key.hasSuffix(".zip") { return "application/zip" }
        if key.hasSuffix(".tar.zst") { return "application/zstd" }
        return "application/octet-stream"
    }
}

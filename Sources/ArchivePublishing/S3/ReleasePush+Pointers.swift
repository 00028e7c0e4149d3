import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// The pointer step of a push: `index.json`, then `manifest.json`, each written only if
/// unchanged since read, every write's answer checked, and both read back before the push
/// reports them (docs/formats.md#push).
extension ReleasePush {
    func pushPointers(channel: String, local: ChannelMerge.Side, report: inout PushReport) async throws {
        let indexKey = channel + "/index.json"
        let manifestKey = channel + "/manifest.json"
        let headers = ["Cache-Control": "public, max-age=\(pointerMaxAge)", "Content-Type": "application/json"]
        rounds: for round in 1...max(1, pointerRounds) {
            report.rounds = round
            if round > 1 { try await Task.sleep(nanoseconds: UInt64.random(in: 20_000_000...(60_000_000 * UInt64(min(round, 10))))) }
            let (remote, manifestReply, indexReply) = try await readPointers(channel)
            var merge = try ChannelMerge.merge(remote: remote, local: local)
            try await requireArchives(of: merge, channel: channel)
            if let keep {
                (merge.index, report.removed) = ChannelPrune.trim(merge.index, keep: keep, manifest: merge.manifest.object)
            }
            report.added = merge.added
            report.updated = merge.updated
            report.current = merge.manifest.version
            var written: [(key: String, body: Data)] = []
            let writes: [(key: String, changed: Bool, body: Data, read: S3Client.Reply)] = [
                (indexKey, remote.index != merge.index, Data(merge.index.jsonBytes()), indexReply),
                (manifestKey, remote.manifest != merge.manifest.object, Data(merge.manifest.jsonBytes()), manifestReply),
            ]
            for write in writes where write.changed {
                let put = try await client.put(write.key, body: write.body, headers: headers.merging(Self.condition(write.read)) { $1 })
                if put.status == 409 || put.status == 412 { continue rounds }  // another push won: merge again
                guard (200..<300).contains(put.status) else {
                    let done = written.isEmpty ? "neither pointer was written" : "index.json was written, manifest.json was not"
                    throw notWritten(write.key, put, done + ": devices still see the previous release")
                }
                written.append((write.key, write.body))
            }
            try await readBack(written, channel: channel, merge: merge)
            report.wroteIndex = report.wroteIndex || written.contains { $0.key == indexKey }
            report.wroteManifest = written.contains { $0.key == manifestKey }
            return
        }
        throw ArchivePublishingError(
            .contended,
            "\(client.name(channel)): other pushes changed index.json or manifest.json in each of \(pointerRounds) rounds; run the push again")
    }

    /// Reads back what was written: each pointer must hold the bytes written, unless another
    /// push replaced it since with pointers that still hold every release of this one (it
    /// merged them). Anything else means the store did not keep the write.
    /// - Throws: `ArchivePublishingError` `.storageWriteLost`.
    func readBack(_ written: [(key: String, body: Data)], channel: String, merge: ChannelMerge) async throws {
        var lost: [String] = []
        for (key, body) in written {
            let limit = key.hasSuffix("/manifest.json") ? StrictJSON.Limits.manifest.maxBytes : StrictJSON.Limits.index.maxBytes
            let reply = try await client.read(key, limit: limit)
            if reply.status == 200, reply.complete, reply.body == body { continue }
            let held = reply.status != 200 ? "HTTP \(reply.status)" : reply.complete ? "\(reply.body.count) other bytes" : "over \(limit) bytes"
            lost.append("\(key.split(separator: "/").last ?? "") answers \(held) (\(body.count) bytes written)")
        }
        guard !lost.isEmpty else { return }
        if try await heldByLaterPush(channel: channel, merge: merge) { return }
        throw ArchivePublishingError(
            .storageWriteLost,
            "\(client.name(channel)) did not keep this push's write: read back, \(lost.joined(separator: "; ")); devices may not see "
                + "\(merge.manifest.version); check that --endpoint is the store itself, then push again")
    }

    /// True when the store's pointers, read again, hold every release of `merge` as it is
    /// or as published later: another push wrote after this one and merged it.
    func heldByLaterPush(channel: String, merge: ChannelMerge) async throws -> Bool {
        guard let (side, _, _) = try? await readPointers(channel), let index = side.index, side.manifest != nil else { return false }
        let ours = ChannelMerge.Side(index: merge.index, manifest: merge.manifest.object, name: "this push")
        guard let again = try? ChannelMerge.merge(remote: side, local: ours) else { return false }
        return again.added.isEmpty && again.updated.isEmpty && again.index == index
    }

    /// The store's `manifest.json` and `index.json` of `channel`, each read no further than
    /// its limit (64 KiB, 16 MiB). The manifest is read before the index: a push that lands
    /// both after these reads changes the manifest's ETag, so a manifest write based on them
    /// fails and the round is redone.
    func readPointers(_ channel: String) async throws -> (side: ChannelMerge.Side, manifest: S3Client.Reply, index: S3Client.Reply) {
        let indexKey = channel + "/index.json"
        let manifestKey = channel + "/manifest.json"
        let manifestReply = try await client.get(manifestKey, limit: StrictJSON.Limits.manifest.maxBytes, what: "a manifest")
        let indexReply = try await client.get(indexKey, limit: StrictJSON.Limits.index.maxBytes, what: "an index")
        let side = ChannelMerge.Side(
            index: try indexReply.status == 200 ? ReleaseIndex.parse(indexReply.body, source: client.name(indexKey)) : nil,
            manifest: try manifestReply.status == 200
                ? StrictJSON.parseObject(manifestReply.body, limits: .manifest, source: client.name(manifestKey)) : nil,
            name: client.name(channel))
        return (side, manifestReply, indexReply)
    }

    /// The refusal of a write the store answered with a status no kept write has.
    func notWritten(_ key: String, _ reply: S3Client.Reply, _ consequence: String) -> ArchivePublishingError {
        let detail = S3Client.errorText(reply.body).map { " (\($0))" } ?? ""
        return ArchivePublishingError(
            .storageWriteLost, "PUT \(client.name(key)): HTTP \(reply.status)\(detail), not a stored write; \(consequence)")
    }

    /// `If-Match` on what was read, or `If-None-Match: *` when there was nothing.
    static func condition(_ reply: S3Client.Reply) -> [String: String] {
        if reply.status == 404 { return ["If-None-Match": "*"] }
        return ["If-Match": reply.etag ?? "\"\""]
    }
}

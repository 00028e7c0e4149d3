import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// What `clientctl prune` keeps and deletes in one channel (docs/delta-updates.md#pruning):
/// the newest `keep` releases stay in `index.json` (and the release `manifest.json` offers,
/// always); then every archive, patch, file list and object that no release left in the
/// index names is deleted. Pointers first, deletions after, so a device never reads an
/// index that names a missing file. Trust roots, `pending/` and files clientctl did not
/// write are never touched.
public enum ChannelPrune {
    /// What a prune did (or, for a dry run, would do).
    public struct Report: Sendable, Equatable {
        public var channel: String
        /// Releases taken out of `index.json`, newest first.
        public var removedReleases: [Version] = []
        /// Channel-relative paths deleted, sorted.
        public var deleted: [String] = []
        public var deletedBytes: Int64 = 0
        /// Channel-relative paths still needed.
        public var kept: Int = 0

        public init(channel: String) { self.channel = channel }
    }

    /// `index` with its newest `keep` releases and the releases the manifest names: its
    /// own, those it offers beside it and those its pins hold devices on
    /// (``namedVersions(_:)``; docs/targeting.md), which devices may still download.
    package static func trim(_ index: ReleaseIndex, keep: Int, manifest: JSONObject?) -> (ReleaseIndex, removed: [Version]) {
        let named = manifest.map(namedVersions) ?? []
        let versioned = index.releases.map { ($0, $0["version"]?.stringValue.flatMap(Version.init)) }
        let newest = Set(versioned.compactMap(\.1).sorted(by: >).prefix(max(keep, 1)))
        var trimmed = index
        trimmed.releases = []
        var removed: [Version] = []
        for (entry, version) in versioned {
            if let version, !newest.contains(version), !named.contains(version) {
                removed.append(version)
            } else {
                trimmed.releases.append(entry)
            }
        }
        return (trimmed, removed.sorted(by: >))
    }

    /// The channel-relative paths the releases name: archives, patches, file lists and the
    /// objects of each list (read with `readList`; a list that cannot be read keeps every
    /// object, since what it needs is unknown). Absolute URLs point elsewhere and are skipped.
    package static func needed(
        by releases: [JSONObject], readList: (String) async throws -> ReleaseFileList?
    ) async rethrows -> (paths: Set<String>, complete: Bool) {
        var paths = Set<String>()
        var complete = true
        for entry in releases {
            if let url = entry["url"]?.stringValue, let path = relative(url) { paths.insert(path) }
            guard let value = entry["delta"], case .success(let delta) = ReleaseDelta.parse(value, version: versionOf(entry)) else { continue }
            for patch in delta.patches { if let path = relative(patch.url) { paths.insert(path) } }
            guard let files = delta.files, let listPath = relative(files.url) else { continue }
            paths.insert(listPath)
            guard let objects = relative(files.objects), let list = try await readList(listPath) else {
                complete = false
                continue
            }
            for file in list.files { paths.insert(objects + file.sha256) }
        }
        paths.formUnion(ChannelCohorts.copies(namedBy: releases))
        return (paths, complete)
    }

    /// True for the files publish writes that a prune may delete: `v<version>.<format>`,
    /// `patches/<sha256>.zst`, `files/<sha256>.json` and `objects/<sha256>`.
    package static func isPrunable(_ path: String, objects: Bool) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 1: return ImmutableFiles.isArchiveName(parts[0])
        case 2 where parts[0] == "patches": return ImmutableFiles.isContentName(parts[1], suffix: ".zst")
        case 2 where parts[0] == "files": return ImmutableFiles.isContentName(parts[1], suffix: ".json")
        case 2 where parts[0] == "objects": return objects && ImmutableFiles.isContentName(parts[1], suffix: "")
        case 3: return ChannelCohorts.isCopyPath(parts)
        default: return false
        }
    }

    /// Prunes the channel folder `releases/channel` under its publishing lock.
    /// - Throws: `ArchivePublishingError` `.notFound` without an index, `.invalidArgument` for
    ///   `keep` < 1, `.busy` while another publish holds the lock, `.io`.
    public static func prune(releases: String, channel: String, keep: Int, dryRun: Bool = false) async throws -> Report {
        guard keep >= 1 else { throw ArchivePublishingError(.invalidArgument, "--keep must be at least 1, not \(keep)") }
        let folder = releases + "/" + channel
        let indexPath = folder + "/index.json"
        guard let data = FileManager.default.contents(atPath: indexPath) else {
            throw ArchivePublishingError(.notFound, "\(indexPath) does not exist: not a published channel")
        }
        let lock = try DirectoryLock(folder)
        defer { lock.release() }
        let index = try ReleaseIndex.parse(data, source: indexPath)
        let manifest = FileManager.default.contents(atPath: folder + "/manifest.json").flatMap {
            try? StrictJSON.parseObject($0, limits: .manifest)
        }
        let (trimmed, removed) = trim(index, keep: keep, manifest: manifest)
        var report = Report(channel: channel)
        report.removedReleases = removed
        // Releases still waiting for signatures have their files in the folder already.
        let pending = ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/pending")) ?? []).compactMap { name in
            FileManager.default.contents(atPath: folder + "/pending/" + name).flatMap { try? StrictJSON.parseObject($0, limits: .manifest) }
        }
        let (needed, complete) = await needed(by: trimmed.releases + (manifest.map { [$0] } ?? []) + pending) {
            readList(folder + "/" + $0)
        }
        if !dryRun, !removed.isEmpty {
            do {
                try AtomicFile.write(Data(trimmed.jsonBytes()), to: indexPath)
            } catch let error as any ClientctlError {
                throw ArchivePublishingError(.io, error.message)
            }
        }
        for path in try existing(in: folder) where isPrunable(path, objects: complete) {
            if needed.contains(path) {
                report.kept += 1
                continue
            }
            var st = stat()
            guard lstat(folder + "/" + path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            if !dryRun, unlink(folder + "/" + path) != 0 {
                throw ArchivePublishingError(.io, "cannot delete \(folder)/\(path): \(String(cString: strerror(errno)))")
            }
            report.deleted.append(path)
            report.deletedBytes += Int64(st.st_size)
        }
        if !dryRun, !report.deleted.isEmpty {
            for sub in ["", "/patches", "/files", "/objects"] where FileManager.default.fileExists(atPath: folder + sub) {
                try? AtomicFile.syncDirectory(folder + sub)
            }
        }
        return report
    }

    /// The file list at `path`, or nil when it is missing or unreadable.
    static func readList(_ path: String) -> ReleaseFileList? {
        guard let bytes = FileManager.default.contents(atPath: path) else { return nil }
        return try? ReleaseFileList.parse([UInt8](bytes), maxFiles: 10_000_000).get()
    }

    /// Channel-relative paths of the files in `folder` and its content folders, sorted.
    static func existing(in folder: String) throws -> [String] {
        var paths = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for sub in ["patches", "files", "objects"] {
            paths += ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + sub)) ?? []).map { sub + "/" + $0 }
        }
        return (paths + ChannelCohorts.existingCopies(in: folder)).sorted()
    }

    /// A URL relative to the channel folder, as a path inside it; nil for absolute URLs or
    /// anything leaving the folder.
    static func relative(_ url: String) -> String? {
        guard !url.contains(":"), !url.hasPrefix("/"), !url.contains("?"), !url.contains("#") else { return nil }
        let parts = url.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        return url
    }

    /// The versions a manifest object names: its own, its `alongside` and its `pins`
    /// (read without verifying: the release side's own files).
    package static func namedVersions(_ manifest: JSONObject) -> Set<Version> {
        var out: Set<Version> = [versionOf(manifest)]
        for field in ["alongside", "pins"] {
            guard case .array(let entries)? = manifest[field] else { continue }
            for case .object(let entry) in entries {
                if let version = entry["version"]?.stringValue.flatMap(Version.init) { out.insert(version) }
            }
        }
        return out
    }

    static func versionOf(_ entry: JSONObject) -> Version {
        entry["version"]?.stringValue.flatMap(Version.init) ?? Version(0, 0, 0)
    }
}

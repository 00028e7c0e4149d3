import ClientFoundation
import ClientUpdater
import FleetReports
import Foundation

extension MeteorChannel {
    /// The skip reasons of the original plugin.
    package enum SkipReason {
        package static let blacklisted = "Skipping downloading blacklisted version"
        package static let incompatible =
            "Skipping downloading new version because the Cordova platform version or plugin versions have changed and are potentially incompatible"
    }

    /// One update check (the plugin's `checkForUpdates` + `AssetBundleManager`):
    /// fetch and parse the manifest, apply the skip rules, then reuse or download every
    /// asset of the new version and store it as `meteor/<version>`.
    ///
    /// A changed embedded bundle (shell update) was handled by the updater before the
    /// check (``UpdateChannel/shellUpdated(state:)``). On success `state.meteor.lastDownloadedVersion` names the version; the caller stages
    /// it as pending. A version equal to the embedded one is returned as the embedded
    /// ``InstalledVersion`` (nothing is downloaded). On failure `meteor/Downloading` is
    /// kept so the next attempt can reuse what was verified.
    package func check(state: inout DeviceState, reporter: CheckReporter) async throws -> CheckOutcome {
        try refreshMemory(state: &state)
        let embedded = try embeddedBundle()
        var downloader = Downloader(transport: transport, retry: options.retry, sleeper: options.sleeper)
        downloader.rateLimiter = options.rateLimiter
        downloader.now = options.now
        options.rateLimiter?.refresh()  // a cap changed while the device runs applies from this check
        let fetcher = AssetFetcher(baseURL: baseURL, downloader: downloader, maxAssetBytes: options.maxAssetBytes)
        let manifestData = try await fetcher.fetchManifest(maxBytes: options.manifestLimits.maxBytes)
        let manifest = try AssetManifest.parse(manifestData, platform: platform, limits: options.manifestLimits)
        let version = manifest.version

        let current = state.current ?? embedded.version
        if version == current { return .upToDate("version \(version) is current") }
        if version == state.pending { return .upToDate("version \(version) is already pending") }
        if state.blacklist.contains(version) {
            reporter.report(.checkRefused, version: version, reason: .blacklisted, detail: "\(SkipReason.blacklisted) \(version)")
            return .skipped("\(SkipReason.blacklisted) \(version)")
        }
        if manifest.cordovaCompatibilityVersion != state.meteor?.cordovaCompatibilityVersion {
            // Another compatibility version needs another shell (a native rebuild).
            reporter.report(.checkRefused, version: version, reason: .needsShell, detail: "\(SkipReason.incompatible) (version \(version))")
            return .skipped("\(SkipReason.incompatible) (version \(version))")
        }
        reporter.report(.updateFound, version: version)

        if version == embedded.version {
            state.meteor?.lastDownloadedVersion = version
            return .installed(InstalledVersion(id: version, directory: embeddedPath, isEmbedded: true))
        }
        if let existing = downloadedBundle(version, parent: embedded) {
            state.meteor?.lastDownloadedVersion = version
            return .installed(installedVersion(existing))
        }
        let started = options.clock.now
        let bundle = try await download(
            manifest, manifestData: manifestData, embedded: embedded, state: state, fetcher: fetcher, reporter: reporter)
        let took = options.clock.now - started
        // The seed's own build under another version: say so (status shows it).
        let note = try await BlockingExecutor.run { SeedAgreement.note(downloaded: bundle, seed: embedded) }
        state.meteor?.noteVersion = note == nil ? nil : version
        state.meteor?.versionNote = note
        if let note {
            options.logger.info("\(note)")
            reporter.note(note)
        }
        reporter.report(
            .downloaded, version: version, via: .files,
            ms: took.inMilliseconds)
        state.meteor?.lastDownloadedVersion = version
        return .installed(installedVersion(bundle))
    }

    /// Steps 5–8 of the directory algorithm: `Downloading/` → `PartialDownload/`, a fresh
    /// `Downloading/` with the manifest, reuse or fetch each own asset, then rename to
    /// `meteor/<version>`. The file work before and after the fetches runs on the
    /// ``BlockingExecutor`` (docs/concurrency.md).
    func download(
        _ manifest: AssetManifest, manifestData: Data, embedded: AssetBundle, state: DeviceState,
        fetcher: AssetFetcher, reporter: CheckReporter
    ) async throws -> AssetBundle {
        guard let finalDir = layout.meteorDirectory(manifest.version) else {
            throw MeteorError(.unsafePath, "version \(manifest.version) cannot be used as a folder name")
        }
        let (bundle, record, toFetch) = try await BlockingExecutor.run {
            try prepareDownloading(manifest, manifestData: manifestData, embedded: embedded)
        }
        defer { record.close() }
        options.logger.info(
            "downloading version \(manifest.version): \(toFetch.count) assets to fetch, \(bundle.ownAssets.count - toFetch.count) already on the device"
        )
        try await fetchAll(toFetch, into: bundle, state: state, fetcher: fetcher, record: record, reporter: reporter)
        let stored = try await BlockingExecutor.run {
            try finishDownloading(bundle, record: record, version: manifest.version, into: finalDir, embedded: embedded)
        }
        options.logger.info("stored version \(manifest.version)")
        return stored
    }

    /// Moves a cut-off `Downloading/` to `PartialDownload/`, makes a fresh `Downloading/`
    /// with the manifest and places every asset an installed version or the partial
    /// download already holds; returns the assets still to fetch.
    private func prepareDownloading(
        _ manifest: AssetManifest, manifestData: Data, embedded: AssetBundle
    ) throws -> (AssetBundle, IntegrityRecord, [AssetManifest.Asset]) {
        try AtomicFile.makeDirectory(layout.meteor)
        if FileManager.default.fileExists(atPath: downloadingDirectory) {
            try AtomicFile.removeTree(partialDirectory)
            guard rename(downloadingDirectory, partialDirectory) == 0 else {
                throw MeteorError(.io, "cannot move \(downloadingDirectory) to \(partialDirectory): \(String(cString: strerror(errno)))")
            }
        }
        let partial = try? AssetBundle.load(
            directory: partialDirectory, platform: platform, parent: embedded,
            limits: options.manifestLimits)
        let partialRecord = IntegrityRecord.read(folder: partialDirectory)
        try AtomicFile.makeDirectory(downloadingDirectory)
        try AtomicFile.write(manifestData, to: downloadingDirectory + "/program.json")
        let bundle = AssetBundle(directory: downloadingDirectory, manifest: manifest, parent: embedded)
        let record = try IntegrityRecord(folder: downloadingDirectory)
        do {
            let donors = ((try? installedVersions()) ?? []).compactMap { downloadedBundle($0.id, parent: embedded) }
            var toFetch: [AssetManifest.Asset] = []
            var placed = Set<String>()
            for asset in bundle.ownAssets where placed.insert(asset.filePath).inserted {
                if try reuse(asset, into: bundle, donors: donors, partial: partial, partialRecord: partialRecord, record: record) { continue }
                toFetch.append(asset)
            }
            return (bundle, record, toFetch)
        } catch {
            record.close()
            throw error
        }
    }

    /// Makes the fetched bundle durable and renames `Downloading/` to `meteor/<version>`.
    private func finishDownloading(
        _ bundle: AssetBundle, record: IntegrityRecord, version: String, into finalDir: String, embedded: AssetBundle
    ) throws -> AssetBundle {
        try syncFolders(of: bundle)
        record.close()
        unlink(downloadingDirectory + "/" + IntegrityRecord.fileName)
        if FileManager.default.fileExists(atPath: finalDir) { try AtomicFile.removeTree(finalDir) }
        guard rename(downloadingDirectory, finalDir) == 0 else {
            throw MeteorError(.io, "cannot move \(downloadingDirectory) to \(finalDir): \(String(cString: strerror(errno)))")
        }
        try AtomicFile.syncDirectory(layout.meteor)
        try? AtomicFile.removeTree(partialDirectory)
        guard let stored = downloadedBundle(version, parent: embedded) else {
            throw MeteorError(.io, "version \(version) is incomplete after download")
        }
        return stored
    }

    /// Links (or copies) `asset` from an installed version or from `PartialDownload/`
    /// when one holds the same URL path (either spelling) with the same hash; the seed
    /// needs no copy, it serves what it holds as the parent. A file from `PartialDownload/`
    /// is re-checked first against our integrity record (the SHA-256 written when it was
    /// stored), or, lacking a record, against the legacy content SHA-1: the manifest hash
    /// of a current Meteor server names no bytes, so a corrupt leftover is never reused.
    /// Files taken from `PartialDownload/` are recorded again in `record`.
    private func reuse(
        _ asset: AssetManifest.Asset, into bundle: AssetBundle, donors: [AssetBundle],
        partial: AssetBundle?, partialRecord: [String: String], record: IntegrityRecord
    ) throws -> Bool {
        let target = bundle.file(of: asset)
        for donor in donors {
            guard let match = donor.cachedAsset(forURLPath: asset.urlPath, hash: asset.hash) else { continue }
            if try place(donor.file(of: match), at: target) { return true }
        }
        guard let partial, let match = partial.cachedAsset(forURLPath: asset.urlPath, hash: asset.hash) else { return false }
        let source = partial.file(of: match)
        let sha256: String
        if let recorded = partialRecord[match.filePath], IntegrityRecord.matches(source, recorded: recorded) {
            sha256 = recorded
        } else if let hash = asset.hash, (try? Digest.hex(.sha1, ofFileAt: source)) == hash,
            let digest = try? Digest.hex(.sha256, ofFileAt: source)
        {
            sha256 = digest
        } else {
            return false
        }
        guard try place(source, at: target) else { return false }
        try record.append(filePath: asset.filePath, sha256: sha256)
        return true
    }

    /// Hard-links `source` to `target`, copying only when a link is impossible; false
    /// when `source` is not a regular file.
    private func place(_ source: String, at target: String) throws -> Bool {
        var st = stat()
        guard lstat(source, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        try AtomicFile.makeDirectory((target as NSString).deletingLastPathComponent)
        _ = try FilePlacement.linkOrCopy(source, to: target)
        return true
    }

    /// Downloads index.html first (its runtime config is checked before anything else is
    /// fetched), then the other assets with at most `maxConnections` in flight.
    private func fetchAll(
        _ assets: [AssetManifest.Asset], into bundle: AssetBundle, state: DeviceState,
        fetcher: AssetFetcher, record: IntegrityRecord, reporter: CheckReporter
    ) async throws {
        let (index, rest) = (assets.filter(\.isIndexPage), assets.filter { !$0.isIndexPage })
        for asset in index {
            try await fetchOne(asset, into: bundle, fetcher: fetcher, record: record) { temp in
                let config = try RuntimeConfig.load(indexFile: temp)
                if let problem = config.problem(
                    expectedVersion: bundle.version, currentRootURL: state.meteor?.rootURL,
                    currentAppId: state.meteor?.appId)
                {
                    throw problem.error
                }
            }
        }
        // Progress counts finished assets' bytes against the manifest's sizes (when known).
        let total = assets.reduce(Int64(0)) { $0 + Int64($1.size ?? 0) }
        var completed = assets.filter(\.isIndexPage).reduce(Int64(0)) { $0 + Int64($1.size ?? 0) }
        try await withThrowingTaskGroup(of: Int64.self) { group in
            var iterator = rest.makeIterator()
            for _ in 0..<options.maxConnections {
                guard let asset = iterator.next() else { break }
                group.addTask {
                    try await fetchOne(asset, into: bundle, fetcher: fetcher, record: record)
                    return Int64(asset.size ?? 0)
                }
            }
            while let bytes = try await group.next() {
                completed += bytes
                reporter.progress(version: bundle.version, completed: completed, total: total > 0 ? total : nil)
                guard let asset = iterator.next() else { continue }
                group.addTask {
                    try await fetchOne(asset, into: bundle, fetcher: fetcher, record: record)
                    return Int64(asset.size ?? 0)
                }
            }
        }
    }

    /// Fetches one asset to a temp file beside its target, verifies it, renames it into
    /// place and records the SHA-256 of the stored bytes.
    private func fetchOne(
        _ asset: AssetManifest.Asset, into bundle: AssetBundle, fetcher: AssetFetcher,
        record: IntegrityRecord, verify: @escaping @Sendable (String) throws -> Void = { _ in }
    ) async throws {
        let target = bundle.file(of: asset)
        let folder = (target as NSString).deletingLastPathComponent
        try await BlockingExecutor.run { try AtomicFile.makeDirectory(folder) }
        let temp = folder + "/.download-\(UInt64.random(in: 0...UInt64.max))"
        defer { unlink(temp) }
        guard case .stored(let sha256) = try await fetcher.fetch(asset, version: bundle.version, to: temp) else { return }
        try await BlockingExecutor.run {
            try verify(temp)
            guard rename(temp, target) == 0 else {
                throw MeteorError(.io, "cannot move download into \(target): \(String(cString: strerror(errno)))")
            }
            try record.append(filePath: asset.filePath, sha256: sha256)
        }
    }

    /// fsyncs every folder of the bundle so the renames inside are durable.
    private func syncFolders(of bundle: AssetBundle) throws {
        var folders: Set<String> = [bundle.directory]
        for asset in bundle.ownAssets {
            var dir = (bundle.file(of: asset) as NSString).deletingLastPathComponent
            while dir.count > bundle.directory.count, folders.insert(dir).inserted {
                dir = (dir as NSString).deletingLastPathComponent
            }
        }
        for folder in folders.sorted(by: { $0.count > $1.count }) where FileManager.default.fileExists(atPath: folder) {
            try AtomicFile.syncDirectory(folder)
        }
    }
}

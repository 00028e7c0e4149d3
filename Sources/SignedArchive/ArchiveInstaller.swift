import ClientFoundation
import ClientUpdater
import DeviceIdentity
import DeviceSetup
import DeviceTargeting
import FleetReports
import Foundation
import SafeArchive
import SignedManifest
import StrictJSON

/// One update check of the signed-archive channel, step by step (docs/formats.md#device-policy, docs/device-layout.md#crash-safety-protocol):
/// manifest → verify → policy → (index.json fallback) → download → unpack → promote. The
/// first step, the feed (the manifest or its 304, the trust roots, the restriction), is
/// ``readFeed(state:deferred:)``.
///
/// Every failure throws before anything is promoted; `state` is changed only on the
/// success path (the caller persists it only then).
struct ArchiveInstaller {
    let channel: ArchiveChannel
    /// Where install notes and download progress go.
    let reporter: CheckReporter
    var layout: RootLayout { channel.layout }
    var config: DeviceConfig { channel.config }

    func run(state: inout DeviceState) async throws -> CheckOutcome {
        var deferred = DeferredManifest(layout: layout)
        // A check that throws keeps the kept manifest: `state.json` keeps the ETag recorded
        // with it (the caller persists nothing of a failed check), so the next check's 304
        // decides again from it instead of saying "up to date" until the next publish.
        let outcome = try await decide(state: &state, deferred: &deferred)
        // A manifest that could not be kept (a full disk): its ETag goes too, so the next
        // check reads the manifest again instead of a 304 with nothing to decide on.
        if deferred.lost { state.archive.manifestETag = nil }
        deferred.finish()
        return outcome
    }

    /// ``run(state:)``'s steps; the kept manifest is `deferred`'s to keep or leave.
    private func decide(state: inout DeviceState, deferred: inout DeferredManifest) async throws -> CheckOutcome {
        let feed: FeedRead
        switch try await readFeed(state: &state, deferred: deferred) {
        case .unchanged(let why): return .upToDate(why)
        case .read(let read): feed = read
        }
        let (manifestURL, manifest, body, etag, verifier, restriction) = (
            feed.manifestURL, feed.manifest, feed.body, feed.etag, feed.verifier, feed.restriction
        )
        // A restriction's apply policy holds for its release until it expires (or the next
        // read of the feed finds another restriction, or none).
        state.archive.restrictedApply = restriction.flatMap { r in
            r.apply.map { ArchiveMemory.RestrictedApply(version: r.version.description, expires: r.expires, policy: $0) }
        }
        // From offline media: only a release its verified index names, judged by the
        // index's `offlineExpires` (docs/offline-media.md#time-offline).
        var offlineExpires: [String: Date] = [:]
        if let media = channel.media {
            guard media.index.names(manifest) else {
                throw SignedArchiveError(
                    .mediaRefused,
                    "\(media.path)/manifest.json: release \(manifest.version) is not one its media.json names (a manifest from another export)")
            }
            if let until = media.index.offlineExpires {
                for release in media.index.releases { offlineExpires[release.manifestDigest] = until }
            }
        }
        let downloader = channel.downloader
        // The decision is pure (ArchiveDecision); this step reads what it needs and carries it out.
        var policy = ArchiveDecision.Policy(
            app: config.app, channel: channel.settings.channel, shellVersion: config.shellVersion, now: channel.now(),
            ignoreRollout: channel.options.ignoreRollout, labels: currentLabels())
        policy.offlineExpires = offlineExpires
        policy.publishedCeiling = channel.clock?.status().authenticated.map { $0.latest + ClockJudgement.tolerance }
        // A feed behind what this device took from a stick: up to date, not a replay, and no
        // report (docs/offline-media.md#mixed-sites). Its older `published` decides nothing.
        if channel.media == nil, manifest.app == config.app, manifest.channel == channel.settings.channel,
            let newer = FeedRules.behindMedia(manifest, memory: state.archive)
        {
            state.archive.manifestETag = etag
            return .upToDate("up to date: \(newer) from offline media is newer than the feed's release \(manifest.version)")
        }
        let candidate: Manifest
        let running = [state.current, state.pending].compactMap { $0 }
        switch try ArchiveDecision.screen(
            manifest, restriction: restriction, state: &state, held: Set(running + (try channel.store.installedVersions()).map(\.id)), policy: policy)
        {
        case .stale(let feedReason):
            // From media, what is stale is the stick, not the feed.
            let reason = channel.media == nil ? feedReason : feedReason.replacingOccurrences(of: "the feed is stale", with: "the media is stale")
            let expired = policy.expiry(of: manifest).map { $0 <= policy.now } ?? false
            reporter.report(.checkRefused, version: manifest.version.description, reason: expired ? .expired : .badRelease, detail: reason)
            // The origin out of reach and a mirror's manifest older than what this device
            // accepted (a mirror that lags): the check fails saying so (docs/site-mirror.md),
            // where a replay from the origin itself is its answer.
            if let mirrors = downloader.transport as? MirrorTransport, mirrors.originDown {
                throw SignedArchiveError(
                    .originUnreachable,
                    "the origin was not reached and the site mirror's manifest cannot stand in: \(reason); "
                        + "this device keeps what it runs until the origin or a fresher mirror answers")
            }
            // Stale is a judgement of this moment (an expiry read on the device's clock). A
            // deferral's ETag left beside no kept manifest (this check drops the kept copy)
            // would make every later check a 304 that says "up to date", even once a clock
            // that ran ahead is set right and the release may be taken: the next check fetches
            // the manifest again and decides anew. Without a kept copy nothing changes.
            if deferred.read() != nil { state.archive.manifestETag = nil }
            return .stale(reason)
        case .revoked(let reason):
            reporter.report(.checkRefused, version: manifest.version.description, reason: .revoked, detail: reason)
            return .skipped(reason)
        case .candidate(let release):
            candidate = release
        case .incompatibleShell(let floor):
            guard
                let fallback = try await newestCompatibleFromIndex(
                    manifestURL: manifestURL, floor: floor, verifier: verifier, policy: policy)
            else {
                state.archive.manifestETag = etag
                let why = ArchiveDecision.noCompatibleRelease(manifest, policy: policy)
                reporter.report(.checkRefused, version: manifest.version.description, reason: .needsShell, detail: why)
                return .noCompatibleRelease(why)
            }
            candidate = fallback
        case .rejected(let reason):
            let floor = state.archive.highestAccepted.flatMap(Version.init)
            let belowFloor = floor.map { manifest.version < $0 } ?? false
            // A site that took a newer release from offline media than its feed offers:
            // the feed is behind, not an attack (docs/offline-media.md#mixed-sites).
            if belowFloor, channel.media == nil, let floor, state.archive.fromMedia?[floor.description] != nil {
                state.archive.manifestETag = etag
                return .upToDate("up to date: \(floor) from offline media is newer than the feed's release \(manifest.version)")
            }
            // An older stick (left in, or from an earlier visit): media never downgrades, and
            // it is no attack on this device either way: the same answer as for a replay.
            if belowFloor, let media = channel.media, let floor {
                reporter.report(.checkRefused, version: manifest.version.description, reason: .floor, detail: reason)
                return .stale(
                    "media never downgrades: release \(manifest.version) in \(media.path) is below \(floor), the highest this device accepted")
            }
            reporter.report(.checkRefused, version: manifest.version.description, reason: belowFloor ? .floor : .badRelease, detail: reason)
            // A mirror's older release standing in for an origin out of reach: the mirror
            // lags, and the check fails as for its stale manifest above (the channel then
            // asks the origin again).
            if belowFloor, let mirrors = downloader.transport as? MirrorTransport, mirrors.originDown {
                throw SignedArchiveError(
                    .originUnreachable,
                    "the origin was not reached and the site mirror's manifest cannot stand in: \(reason); "
                        + "this device keeps what it runs until the origin or a fresher mirror answers")
            }
            throw SignedArchiveError(.archiveRejected, reason)
        }
        let isUnpacked = FileManager.default.fileExists(atPath: layout.clientDirectory(candidate.version))
        let deviceId = { try DeviceIdFile.readOrCreate(layout) }
        var decision: ArchiveDecision.Decision
        /// Why the newest release is not for this device, when one offered beside it is.
        var besideNote: String?
        // A target that asks about a cohort file this device has no answer for yet: read
        // that file (docs/targeting.md#cohorts) and decide again, until nothing is missing.
        var cohortsRead = 0
        if !manifest.cohorts.isEmpty, let id = DeviceIdFile.read(layout) {
            // The answers kept for the lists this manifest names: a device that asked before
            // decides at once, reading no cohort file.
            let kept = CohortAnswerStore(layout: layout)
            for cohort in manifest.cohorts {
                if let answer = kept.read(cohort.digest, deviceId: id) { policy.cohorts.byDigest[cohort.digest] = answer }
            }
        }
        while true {
            (decision, besideNote) = try await decideRelease(
                candidate, newest: manifest, restriction: restriction, state: state, isUnpacked: isUnpacked, policy: policy,
                manifestURL: manifestURL, verifier: verifier, body: [UInt8](body), deferred: &deferred, deviceId: deviceId)
            guard case .needsCohort(let cohort) = decision else { break }
            cohortsRead += 1
            guard cohortsRead <= 4 * CohortReference.maxCount else {
                throw SignedArchiveError(.internalError, "the decision asked for cohort \(cohort.name) again after \(cohortsRead - 1) reads")
            }
            policy.cohorts.byDigest[cohort.digest] = try await cohortAnswer(cohort, manifestURL: manifestURL, deviceId: try deviceId())
        }
        CohortAnswerStore(layout: layout).prune(keeping: Set(policy.cohorts.byDigest.keys).union(manifest.cohorts.map(\.digest)))
        switch decision {
        case .skip(let reason, let waitsForRollout):
            let revoked = ArchiveDecision.isRevoked(candidate, restriction: restriction, state: state)
            reporter.report(
                .checkRefused, version: candidate.version.description,
                reason: waitsForRollout ? .rollout : revoked ? .revoked : .blacklisted, detail: reason,
                rollout: Self.rolloutSeen(candidate, now: policy.now))
            state.archive.manifestETag = etag
            if waitsForRollout { deferred.keep([UInt8](body)) }  // the next check, even a 304, reads the schedule again
            return .skipped(reason)
        case .notTargeted(let reason):
            reporter.report(.checkRefused, version: candidate.version.description, reason: .target, detail: reason)
            state.archive.manifestETag = etag
            deferred.keep([UInt8](body))  // the next check, even a 304, decides again on the labels it has then
            return .skipped(reason)
        case .upToDate(let version, let recorded):
            state.archive.manifestETag = etag
            channel.store.cleanLeftovers()  // the partial download of a run that died after promoting
            ArchiveDecision.raiseFloor(&state, to: version)
            if !recorded, let promoted = try channel.store.installedVersions().first(where: { $0.id == version.description }) {
                return .installed(promoted)  // promoted by a run that died before recording it in state.json
            }
            return .upToDate("up to date: \(version) is installed" + (besideNote.map { " (\($0))" } ?? ""))
        case .install(let release):
            // The download policy (docs/download-policy.md): the manifest verified, a release
            // outside what it allows stages nothing and is kept for the next check, even a 304.
            let downloadPolicy = currentDownloadPolicy()
            let (verdict, patchOnly) = await downloadVerdict(release, policy: downloadPolicy, now: policy.now)
            let pastDeadline = release.apply?.deadline.map { $0 <= policy.now } ?? false
            if case .deferred(let why) = verdict {
                state.archive.manifestETag = etag
                deferred.keep([UInt8](body))
                return deferral(why, of: release, state: &state)
            }
            if case .allowed(let note?) = verdict { reporter.note("release \(release.version): \(note)") }
            reporter.report(.updateFound, version: release.version.description, rollout: Self.rolloutSeen(release, now: policy.now))
            let installed: InstalledVersion
            do {
                let run: @Sendable () async throws -> InstalledVersion = { [self] in
                    try await install(release, manifestURL: manifestURL, downloader: downloader, patchOnly: patchOnly)
                }
                // Past the apply deadline no hold or closing window stops it (neither delays a
                // release past its grace); nor does one stop a copy from offline media, which
                // is no download.
                installed =
                    pastDeadline || channel.media != nil
                    ? try await run() : try await racingStops(run, release: release, policy: downloadPolicy, allowedAt: policy.now)
            } catch let stopped as DownloadStopped {
                state.archive.manifestETag = etag
                deferred.keep([UInt8](body))
                return deferral(stopped.deferral, of: release, state: &state)
            }
            state.archive.downloadDeferred = nil
            state.archive.manifestETag = etag
            ArchiveDecision.raiseFloor(&state, to: release.version)
            return .installed(installed)
        case .needsCohort(let cohort):
            throw SignedArchiveError(.internalError, "the decision still asks for cohort \(cohort.name) after reading it")
        }
    }

    /// The labels `config.json` holds now (`clientctl label set` changes them while an agent
    /// runs); those the channel was opened with when it no longer reads.
    private func currentLabels() -> DeviceLabels {
        (try? DeviceConfig.load(layout))?.labels ?? config.labels
    }

    /// The rollout a release's manifest states at `now`, for reports.
    static func rolloutSeen(_ manifest: Manifest, now: Date) -> RolloutSeen? {
        guard let rollout = manifest.rollout else { return nil }
        return RolloutSeen(percent: Int(rollout.percent(at: now).rounded(.down)), paused: rollout.paused)
    }

    /// The newest release of `index.json` that verifies, passes the policy and is above
    /// what this device has; `nil` when there is none.
    private func newestCompatibleFromIndex(
        manifestURL: URL, floor: Version?, verifier: ManifestVerifier, policy: ArchiveDecision.Policy
    ) async throws -> Manifest? {
        guard let index = try await fetchIndex(manifestURL: manifestURL) else { return nil }
        var policy = policy
        policy.now = channel.now()
        return index.validReleases(with: verifier)
            .filter { ArchiveDecision.acceptsFallback($0, floor: floor, policy: policy) }
            .max { $0.version < $1.version }
    }

    /// Downloads, checks and unpacks one release, then promotes it into `clients/`.
    /// - Parameter patchOnly: a metered link allows the patch and not the archive: a patch
    ///   that fails stops there (``DownloadStopped``, reason metered) instead of falling back.
    private func install(_ manifest: Manifest, manifestURL: URL, downloader: Downloader, patchOnly: Bool = false) async throws
        -> InstalledVersion
    {
        let version = manifest.version
        let archiveURL = try ManifestPolicy.archiveURL(
            for: manifest, manifestURL: manifestURL,
            allowInsecureHTTP: config.allowInsecureHTTP
        ).get()
        guard manifest.size <= config.limits.maxArchiveBytes else {
            throw SignedArchiveError(
                .archiveLimit,
                "release \(version): archive of \(manifest.size) bytes is over this device's cap of \(config.limits.maxArchiveBytes) bytes")
        }
        guard let format = ArchiveFormat(fileName: archiveURL.lastPathComponent) else {
            throw SignedArchiveError(
                .archiveRejected, "release \(version): \(archiveURL.lastPathComponent) is not a .tar.gz, .zip or .tar.zst archive")
        }
        let partial = PartialDownload.path(layout: layout, manifest: manifest, format: format)
        // Promoting, cleaning and unpacking run on the BlockingExecutor (docs/concurrency.md).
        let store = channel.store
        let sidecar = Data(manifest.jsonBytes())
        try AtomicFile.makeDirectory(layout.clients)
        var limits = ExtractionLimits.default
        limits.maxTotalBytes = UInt64(config.limits.maxUnpackedBytes)
        limits.maxEntries = config.limits.maxEntries
        let extractor = SafeExtractor(limits: limits)
        // A patch against a version this device holds first; anything wrong with that path
        // (no base, a bad patch) falls back to the full archive below.
        let delta = DeltaInstall(
            channel: channel, manifest: manifest, manifestURL: manifestURL, downloader: downloader, extractor: extractor, reporter: reporter)
        // Bytes from site mirrors, counted from here for the `downloaded` report.
        let mirrors = downloader.transport as? MirrorTransport
        var mirrorBytesBefore = mirrors?.mirrorBytes ?? 0
        switch channel.options.useDelta ? await delta.run(keeping: partial) : .fullArchive(note: nil) {
        case .unpacked(let unpacked):
            reporter.report(
                .downloaded, version: version.description, via: .patch, bytes: unpacked.bytes,
                mirrorBytes: mirrors.map { $0.mirrorBytes - mirrorBytesBefore })
            reporter.note(unpacked.note)
            channel.logger.debug("release \(version): \(unpacked.note)")
            let (tree, staging, leftovers) = (unpacked.tree, unpacked.staging, unpacked.leftovers)
            try await BlockingExecutor.run {
                do {
                    try store.promote(staging: tree, version: version, sidecar: sidecar)
                } catch {
                    try? AtomicFile.removeTree(staging)
                    throw error
                }
                try? AtomicFile.removeTree(staging)
                unlink(partial)
                for leftover in leftovers { try? AtomicFile.removeTree(leftover) }
            }
            channel.logger.info("installed release \(version) from a patch")
            return try listed(version)
        case .fullArchive(let note):
            // A download stopped meanwhile (a hold, a closing window): the patch's and the file
            // list's downloads stay where they are for the next check, not cleaned as leftovers.
            try Task.checkCancellation()
            if let note { reporter.note(note) }
            if patchOnly {
                throw DownloadStopped.meteredPatchOnly(release: version, note: note)
            }
        }
        channel.logger.info("downloading release \(version): \(archiveURL.absoluteString) (\(manifest.size) bytes)")
        try await BlockingExecutor.run { store.cleanLeftovers(keeping: [partial]) }
        try requireSpace(for: manifest, archive: archiveURL, partial: partial)
        // From media: the archive is copied once, straight to the download file, which the
        // downloader then finds complete and verifies (docs/offline-media.md).
        if let media = channel.media { try await BlockingExecutor.run { try media.transport.place(archiveURL, at: partial) } }
        let staging = try channel.store.makeStagingDirectory(label: "v\(version)")
        let clock = channel.downloadGate.clock
        let started = clock.now
        mirrorBytesBefore = mirrors?.mirrorBytes ?? 0
        do {
            let tree = staging + "/tree"
            let report = reporter.progressHandler
            let id = version.description
            let total = manifest.size
            _ = try await downloader.download(
                archiveURL, to: partial, expectedSize: manifest.size, expectedDigest: manifest.sha256, algorithm: .sha256,
                progress: progressCallback(report, id: id, total: total),
                verified: { fd in
                    do throws(SafeArchiveError) {
                        _ = try extractor.extract(fileDescriptor: fd, into: tree)
                    } catch {
                        // The verified bytes are bad: nothing to resume, drop the download too.
                        unlink(partial)
                        var named = error
                        named.message = "release \(version) (\(archiveURL.lastPathComponent)): \(error.message)"
                        throw named
                    }
                })
            let took = clock.now - started
            reporter.report(
                .downloaded, version: version.description, via: .archive, bytes: manifest.size,
                ms: took.inMilliseconds, mirrorBytes: mirrors.map { $0.mirrorBytes - mirrorBytesBefore })
            // The unpacked tree is made durable just before (syncfs): where that fails.
            try FaultPoint.hit("unpack.done") { SignedArchiveError.io("cannot sync", path: tree, errno: $0) }
            try await BlockingExecutor.run {
                try store.promote(staging: tree, version: version, sidecar: sidecar)
                try? AtomicFile.removeTree(staging)
                unlink(partial)
            }
        } catch {
            try? await BlockingExecutor.run { try AtomicFile.removeTree(staging) }
            channel.logger.debug("release \(version) not installed: \(error)")
            throw error
        }
        channel.logger.info("installed release \(version)")
        return try listed(version)
    }

    /// Refuses a download that cannot fit before its first byte: the signed size, less what
    /// an interrupted run left, and as much again to unpack (``DiskSpace``). The partial
    /// download of a refused release is dropped: it could only hold the disk full.
    private func requireSpace(for manifest: Manifest, archive: URL, partial: String) throws {
        var st = stat()
        let downloaded = lstat(partial, &st) == 0 ? Int64(st.st_size) : 0
        do {
            try DiskSpace.require(
                DiskSpace.needed(forArchiveOf: manifest.size, downloaded: downloaded),
                for: "release \(manifest.version): archive \(archive.lastPathComponent) of", size: manifest.size, at: layout.clients)
        } catch {
            unlink(partial)
            throw error
        }
    }

    private func listed(_ version: Version) throws -> InstalledVersion {
        guard let installed = try channel.store.installedVersions().first(where: { $0.id == version.description }) else {
            throw SignedArchiveError(.internalError, "release \(version) was promoted but is not listed")
        }
        return installed
    }
}

/// Adapts a ``CheckReporter``'s progress to the downloader's byte counter.
private func progressCallback(_ handler: CheckReporter.Progress?, id: String, total: Int64) -> (@Sendable (Int64) -> Void)? {
    guard let handler else { return nil }
    return { completed in handler(id, completed, total) }
}

/// Where an archive download lives while it is incomplete, so an interrupted run resumes
/// it: `clients/.staging-partial-<version>-<sha256 prefix>.<ext>`, named from verified
/// values only.
enum PartialDownload {
    static func path(layout: RootLayout, manifest: Manifest, format: ArchiveFormat) -> String {
        layout.clients + "/.staging-partial-v\(manifest.version)-\(manifest.sha256.prefix(16)).\(format.fileExtension)"
    }
}

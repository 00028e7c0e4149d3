import ApplyPolicy
import ClientFoundation
import DeviceTargeting
import Foundation
import ReleaseSigning
import SafeArchive
import SignedManifest
import StrictJSON

/// What to publish: the inputs of `clientctl publish`.
public struct PublishRequest: Sendable {
    /// The built client folder (its top level is the web root).
    public var source: String
    public var app: String
    public var channel: String
    public var version: Version
    public var minShellVersion: Version
    public var maxShellVersion: Version?
    /// The release folder root; the channel's files go to `<out>/<channel>/`.
    public var outputDirectory: String
    /// Public URL of ``outputDirectory``; when set, manifests carry absolute archive URLs
    /// (`<baseURL>/<channel>/v1.2.3.tar.gz`), else URLs relative to the manifest.
    public var baseURL: String?
    public var format: ArchiveFormat
    public var expires: Date?
    /// The `published` time (whole seconds are written).
    public var now: Date
    /// Publish files and folders whose name starts with `.` (`.env`, `.git/`); off by
    /// default, when they are skipped and listed in ``PublishResult/skippedHidden``.
    public var includeHidden = false
    /// A staged rollout for the release (`nil`: every device at once). Without an explicit
    /// ``expires`` such a manifest expires ``ChannelEditor/rolloutExpiry`` after its last step.
    public var rollout: Rollout?
    /// Versions devices must leave and never select again.
    public var revoked: [Version] = []
    /// Which devices the release is for (`nil`: every device of the channel), signed into
    /// the manifest's `target` (docs/targeting.md).
    public var target: TargetExpression?
    /// Older releases of the channel offered beside this one to the devices it is not for
    /// (docs/targeting.md#two-releases-at-once); each must be in `index.json`.
    public var alongside: [Version] = []
    /// When devices switch to the release once staged (`nil`: `next-start`); signed into
    /// the manifest's `apply` (docs/apply-policies.md).
    package var apply: ApplyPolicy?
    /// How many older releases of the channel get a delta patch to this one (0: none);
    /// docs/delta-updates.md.
    public var deltaBases = 3
    /// `--allow-far-future`: stamp ``now`` even when it is more than a year beyond the
    /// channel's newest `published` (refused otherwise: a clock far ahead would make every
    /// later release a replay to devices).
    public var allowFarFuture = false

    public init(
        source: String, app: String, channel: String, version: Version, minShellVersion: Version,
        maxShellVersion: Version? = nil, outputDirectory: String, baseURL: String? = nil,
        format: ArchiveFormat = .tarGzip, expires: Date? = nil, now: Date = Date()
    ) {
        self.source = source
        self.app = app
        self.channel = channel
        self.version = version
        self.minShellVersion = minShellVersion
        self.maxShellVersion = maxShellVersion
        self.outputDirectory = outputDirectory
        self.baseURL = baseURL
        self.format = format
        self.expires = expires
        self.now = now
    }
}

/// What `publish` did.
public struct PublishResult: Sendable {
    /// The release's manifest (the existing one when ``unchanged``).
    public var manifest: Manifest
    /// `<out>/<channel>/vX.Y.Z.<ext>`.
    public var archivePath: String
    /// `<out>/<channel>/manifest.json`.
    public var manifestPath: String
    /// `<out>/<channel>/index.json`.
    public var indexPath: String
    /// True when this version was already published with identical bytes: nothing changed.
    public var unchanged: Bool
    /// Hidden files and folders (`.env`) left out of the archive (see ``PublishRequest/includeHidden``).
    public var skippedHidden: [String] = []
    /// Set when the signatures do not meet the trust root's release threshold yet: the
    /// partly signed manifest waits here (`<out>/<channel>/pending/v<version>.json`), not in
    /// `manifest.json`, until `clientctl sign` adds the missing ones.
    public var pendingPath: String?
    /// How many more release keys must sign (0 when published).
    public var missingSignatures = 0
    /// What updating to this release costs a device coming from each older release that
    /// got a delta (`patchBytes` nil: the full archive was cheaper than the patch, or no
    /// patch was built and `skipped` says why: the base shares too little with this release).
    public var deltaCosts: [(from: Version, patchBytes: Int64?, skipped: String?)] = []
}

/// Writes the release folder (docs/formats.md#release-folder): `<out>/<channel>/manifest.json` (newest
/// release), `index.json` (every release, newest first) and immutable archives.
///
/// Refusals: a source folder that breaks `SourceTree`'s rules (a `SafeArchiveError`
/// `.sourceRejected`, `.notFound` for a missing folder); a version already in the
/// index with different archive bytes or different metadata (the same bytes and metadata
/// are a no-op); a version not above the channel's newest; an archive file that exists with
/// other bytes; a release folder of another app or channel. Writes the archive first, then
/// `index.json`, then `manifest.json`, each atomically, under an exclusive lock on the
/// channel folder.
public enum Publisher {
    /// Publishes `request` signed with `key`.
    @discardableResult
    public static func publish(_ request: PublishRequest, key: Ed25519.PrivateKey) async throws -> PublishResult {
        try await publish(request, signers: [key])
    }

    /// Publishes `request` signed by every signer (a threshold of the channel's trust root
    /// when the folder publishes one).
    @discardableResult
    public static func publish(_ request: PublishRequest, signers: [any DocumentSigner]) async throws -> PublishResult {
        try validate(request)
        // Scanning, archiving, hashing and delta making run on the BlockingExecutor
        // (docs/concurrency.md); signing, which may ask an external signer, does not.
        let tree = try await BlockingExecutor.run { try SourceTree.scan(request.source, includeHidden: request.includeHidden) }
        var result = try await publish(request, tree: tree, signers: signers)
        result.skippedHidden = tree.skippedHidden
        return result
    }

    private static func publish(_ request: PublishRequest, tree: SourceTree, signers: [any DocumentSigner]) async throws -> PublishResult {
        let channelDir = request.outputDirectory + "/" + request.channel
        let lock = try await BlockingExecutor.run { () throws -> DirectoryLock in
            do {
                try FileManager.default.createDirectory(atPath: channelDir, withIntermediateDirectories: true)
            } catch {
                throw ArchivePublishingError(.io, "cannot create \(channelDir): \(error.localizedDescription)")
            }
            let lock = try DirectoryLock(channelDir)
            removeStaleTemporaryFiles(in: channelDir)
            return lock
        }
        defer { lock.release() }
        let temp = channelDir + "/.publish-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).\(request.format.fileExtension)"
        let work = channelDir + "/.publish-\(getpid())-delta-\(UInt32.random(in: 0...UInt32.max))"
        do {
            let result = try await publishLocked(request, tree: tree, signers: signers, channelDir: channelDir, temp: temp, work: work)
            await removeTemporaries(temp, work)
            return result
        } catch {
            await removeTemporaries(temp, work)
            throw error
        }
    }

    /// The archive and the delta work folder of one publish go once it is done (under the lock).
    private static func removeTemporaries(_ temp: String, _ work: String) async {
        _ = try? await BlockingExecutor.run {
            try? AtomicFile.removeTree(work)
            unlink(temp)
        }
    }

    private static func publishLocked(
        _ request: PublishRequest, tree: SourceTree, signers: [any DocumentSigner], channelDir: String, temp: String, work: String
    ) async throws -> PublishResult {
        let indexPath = channelDir + "/index.json"
        let manifestPath = channelDir + "/manifest.json"
        let archiveName = Manifest.archiveName(version: request.version, format: request.format)
        let archivePath = channelDir + "/" + archiveName
        let root = try await BlockingExecutor.run { try ReleaseRoots.newest(inChannelFolder: channelDir) }
        let missing = try ReleaseRoots.missingSignatures(in: root, signers: signers)
        let (loaded, sha256, size) = try await BlockingExecutor.run { () throws -> (ReleaseIndex, String, Int64) in
            let index = try loadIndex(indexPath, manifestPath: manifestPath, request: request)
            try ArchiveWriter.write(tree, format: request.format, to: temp)
            return (index, try Digest.hex(.sha256, ofFileAt: temp), try fileSize(temp))
        }
        var index = loaded

        var draft = ManifestDraft(
            app: request.app, channel: request.channel, version: request.version,
            url: archiveURL(request, archiveName: archiveName), sha256: sha256, size: size,
            minShellVersion: request.minShellVersion, maxShellVersion: request.maxShellVersion,
            published: request.now, expires: request.expires)
        draft.rollout = request.rollout
        draft.revoked = request.revoked
        draft.target = request.target
        draft.apply = request.apply
        // Pins hold through every later release of the channel until `rollout unpin`
        // (docs/targeting.md#pins): the new manifest carries the current one's.
        draft.pins = currentPins(manifestPath, below: request.version, index: index)
        try ChannelEditGuards.requireNoPinTo(request.revoked, in: draft.pins)
        // The cohort lists the targets ask about, as the channel holds them now (docs/targeting.md#cohorts).
        draft.cohorts = try ChannelCohorts.references(for: [draft.target] + draft.pins.map(\.target), folder: channelDir)
        if !request.alongside.isEmpty {
            let beside = try AlongsidePlan.releases(request.alongside, own: request.version, index: index, indexPath: indexPath)
            draft.alongside = beside.map(AlongsideRelease.init(naming:))
            draft.rollout = try draft.rollout.map { try AlongsidePlan.placed($0, version: request.version, beside: beside) }
        }
        if let rollout = request.rollout, draft.expires == nil {
            draft.expires = ChannelEditor.defaultExpiry(
                for: rollout, published: Date(timeIntervalSince1970: floor(request.now.timeIntervalSince1970)))
        }
        if let existing = try existingRelease(in: index, request: request, draft: draft, indexPath: indexPath) {
            try await BlockingExecutor.run { [index] in
                try installArchive(temp, at: archivePath, sha256: sha256)
                try repairManifest(manifestPath, index: index)
            }
            return PublishResult(
                manifest: existing, archivePath: archivePath, manifestPath: manifestPath,
                indexPath: indexPath, unchanged: true)
        }
        // A new release: its `published` must not run far ahead of the channel's newest.
        try ChannelEditGuards.requirePlausible(
            request.now, newest: ChannelEditGuards.newestPublished(index), channel: request.channel, allowed: request.allowFarFuture)
        // A re-signing a moment ago stamped the second after its own: a release published in
        // the same second would be a replay to devices that took that re-signing.
        draft.published = ChannelEditGuards.stamp(request.now, after: ChannelEditGuards.newestPublished(index))
        var built: DeltaBuilder.Built?
        if request.deltaBases > 0 {
            built = try await BlockingExecutor.run { [index] in
                guard mkdir(work, 0o700) == 0 else { throw ArchivePublishingError(.io, "cannot create \(work): \(String(cString: strerror(errno)))") }
                return try DeltaBuilder(channelDir: channelDir, work: work, bases: request.deltaBases)
                    .build(tree: tree, version: request.version, archiveSize: size, index: index)
            }
            draft.delta = built?.delta
        }
        let manifest = try await draft.signed(by: signers)
        // Immutable files first (objects, the file list, patches), then the archive.
        try await BlockingExecutor.run { [built] in
            if let built {
                for folder in Set(built.files.map { ($0.name as NSString).deletingLastPathComponent }) {
                    try FileManager.default.createDirectory(atPath: channelDir + "/" + folder, withIntermediateDirectories: true)
                }
                for file in built.files { try installArchive(file.temp, at: channelDir + "/" + file.name, sha256: file.sha256) }
            }
            try installArchive(temp, at: archivePath, sha256: sha256)
        }
        let costs = built?.costs.map { (from: $0.from, patchBytes: $0.patchBytes, skipped: $0.skipped) } ?? []
        func result(_ manifest: Manifest, pendingPath: String? = nil, missing: Int = 0) -> PublishResult {
            var result = PublishResult(
                manifest: manifest, archivePath: archivePath, manifestPath: manifestPath, indexPath: indexPath, unchanged: false)
            result.deltaCosts = costs
            result.pendingPath = pendingPath
            result.missingSignatures = missing
            return result
        }
        let pendingPath = channelDir + "/pending/v\(manifest.version).json"
        if missing > 0 {
            if let data = FileManager.default.contents(atPath: pendingPath),
                let waiting = try? StrictJSON.parseObject(data, limits: .manifest), waiting["sha256"] == manifest.object["sha256"]
            {
                // The same release is waiting: these keys countersign it (its bytes stay).
                let outcome = try await PendingRelease.sign(pendingPath, signers: signers, lockHeld: true)
                return result(outcome.manifest, pendingPath: outcome.published ? nil : outcome.path, missing: outcome.missing)
            }
            try PendingRelease.write(manifest, channelFolder: channelDir)
            return result(manifest, pendingPath: pendingPath, missing: missing)
        }
        index.insert(manifest)
        try await BlockingExecutor.run { [index] in
            unlink(pendingPath)  // a release that waited for signatures is published now
            do {
                try AtomicFile.write(Data(index.jsonBytes()), to: indexPath)
                try AtomicFile.write(Data(manifest.jsonBytes()), to: manifestPath)
            } catch let error as any ClientctlError {
                throw ArchivePublishingError(.io, error.message)
            }
        }
        return result(manifest)
    }

    /// The pins of the channel's current `manifest.json` that hold below `version` (none
    /// without one, or when it does not read), each naming its release as `index` holds it
    /// now: the pinned release may have been re-signed since (a pin of the newest release
    /// re-signs it), and devices look it up by that digest.
    static func currentPins(_ manifestPath: String, below version: Version, index: ReleaseIndex) -> [ReleasePin] {
        guard let data = FileManager.default.contents(atPath: manifestPath),
            let object = try? StrictJSON.parseObject(data, limits: .manifest, source: manifestPath),
            let current = try? Manifest.validate(object).get()
        else { return [] }
        return current.pins.compactMap { pin in
            guard pin.release.version < version,
                let entry = index.releases.lazy.compactMap({ try? Manifest.validate($0).get() }).first(where: { $0.version == pin.release.version })
            else { return nil }
            return ReleasePin(target: pin.target, release: AlongsideRelease(naming: entry))
        }
    }

    /// A publish killed before it finished leaves `.publish-*` files and delta work
    /// folders; under the lock no other publish is running, so they are removed (they
    /// must not be uploaded).
    static func removeStaleTemporaryFiles(in channelDir: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: channelDir)) ?? []
        for name in names where name.hasPrefix(".publish-") {
            try? AtomicFile.removeTree(channelDir + "/" + name)
        }
    }

    /// After an interrupted publish `index.json` may be newer than `manifest.json`: make
    /// `manifest.json` the newest entry of the index again.
    static func repairManifest(_ manifestPath: String, index: ReleaseIndex) throws {
        guard let newest = index.releases.first else { return }
        if let data = FileManager.default.contents(atPath: manifestPath),
            let current = try? StrictJSON.parseObject(data, limits: .manifest), current == newest
        {
            return
        }
        do {
            try AtomicFile.write(Data(JSONPrettyPrinter.render(.object(newest))), to: manifestPath)
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
    }

    /// Parses `--expires`: an RFC 3339 UTC time, or `Nd` for N days after `now` (1–36500).
    public static func parseExpiry(_ text: String, now: Date) -> Date? {
        if text.hasSuffix("d"), let days = Int(text.dropLast()), (1...36_500).contains(days) {
            return Date(timeIntervalSince1970: floor(now.timeIntervalSince1970) + Double(days) * 86_400)
        }
        return RFC3339.parse(text)
    }

    static func validate(_ r: PublishRequest) throws {
        // Field rules are the verifier's: app and channel are checked the way devices check them.
        for (kind, value) in [(ReleaseIdentifier.app, r.app), (.channel, r.channel)] {
            if let problem = kind.problem(value) {
                throw ArchivePublishingError.field(kind.rawValue, "is \"\(value.prefix(80))\": \(problem)")
            }
        }
        if let max = r.maxShellVersion, max < r.minShellVersion {
            throw ArchivePublishingError.field("maxShellVersion", "\(max) is below `minShellVersion` \(r.minShellVersion)")
        }
        if r.revoked.contains(r.version) {
            throw ArchivePublishingError.field("revoked", "names \(r.version), the release being published")
        }
        if let expires = r.expires, expires <= r.now {
            throw ArchivePublishingError.field("expires", "\(RFC3339.format(expires)) is not in the future")
        }
        if let base = r.baseURL {
            guard let url = URL(string: base), let scheme = url.scheme?.lowercased(), ["https", "http", "file"].contains(scheme),
                url.host != nil || scheme == "file", !base.contains(" ")
            else {
                throw ArchivePublishingError.field("baseURL", "\(base) is not an absolute https:, http: or file: URL")
            }
        }
    }

    static func archiveURL(_ r: PublishRequest, archiveName: String) -> String {
        guard let base = r.baseURL else { return archiveName }
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        return "\(trimmed)/\(r.channel)/\(archiveName)"
    }

    static func loadIndex(_ indexPath: String, manifestPath: String, request r: PublishRequest) throws -> ReleaseIndex {
        guard let data = FileManager.default.contents(atPath: indexPath) else {
            if FileManager.default.fileExists(atPath: manifestPath) {
                throw ArchivePublishingError(
                    .conflict, "\(manifestPath) exists without index.json: not a release folder written by clientctl publish")
            }
            return ReleaseIndex(app: r.app, channel: r.channel)
        }
        let index = try ReleaseIndex.parse(data, source: indexPath)
        guard index.app == r.app, index.channel == r.channel else {
            throw ArchivePublishingError(.conflict, "\(indexPath) is for app \(index.app), channel \(index.channel); not \(r.app), \(r.channel)")
        }
        return index
    }

    /// The already-published release of this version when publishing it again is a no-op;
    /// `nil` when the version is new and above the newest; throws for every conflict.
    static func existingRelease(
        in index: ReleaseIndex, request r: PublishRequest, draft: ManifestDraft,
        indexPath: String
    ) throws -> Manifest? {
        var newest: Version?
        for (k, entry) in index.releases.enumerated() {
            guard case .string(let text)? = entry["version"], let v = Version(text) else {
                throw ArchivePublishingError(.invalidManifest, "\(indexPath): releases[\(k)] has no valid version")
            }
            if newest.map({ $0 < v }) ?? true { newest = v }
            guard v == r.version else { continue }
            let sha = entry["sha256"]?.stringValue ?? ""
            guard sha == draft.sha256 else {
                throw ArchivePublishingError(
                    .conflict,
                    "version \(text) is already published with other contents (sha256 \(sha), this folder gives \(draft.sha256)); publish a new version"
                )
            }
            let wanted = draft.unsignedObject(keyId: "")
            for field in ["url", "size", "minShellVersion", "maxShellVersion"] where entry[field] != wanted[field] {
                throw ArchivePublishingError(
                    .conflict, "version \(text) is already published with another \(field); publish a new version to change it")
            }
            do {
                return try Manifest.validate(entry).get()
            } catch {
                throw ArchivePublishingError(.invalidManifest, "\(indexPath): releases[\(k)] is not a valid manifest: \(error)")
            }
        }
        if let newest, !(newest < r.version) {
            throw ArchivePublishingError(.notNewer, "version \(r.version) is not above \(newest), the newest release of channel \(r.channel)")
        }
        return nil
    }

    /// Moves the new archive into place, or checks that the file already there has the
    /// same bytes: an archive is never overwritten with other bytes.
    static func installArchive(_ temp: String, at path: String, sha256: String) throws {
        if FileManager.default.fileExists(atPath: path) {
            let existing = try Digest.hex(.sha256, ofFileAt: path)
            guard existing == sha256 else {
                throw ArchivePublishingError(.conflict, "\(path) exists with other bytes (sha256 \(existing)); archives are never overwritten")
            }
            return
        }
        guard link(temp, path) == 0 else {
            throw ArchivePublishingError(.io, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        do {
            try AtomicFile.syncDirectory((path as NSString).deletingLastPathComponent)
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
    }

    static func fileSize(_ path: String) throws -> Int64 {
        var st = stat()
        guard stat(path, &st) == 0 else { throw ArchivePublishingError(.io, "cannot stat \(path): \(String(cString: strerror(errno)))") }
        return Int64(st.st_size)
    }
}

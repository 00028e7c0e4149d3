import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON

/// One run of ``SiteMirror``: read and verify, stage, then put in place and prune.
struct MirrorRun {
    let mirror: SiteMirror
    let request: MirrorRequest
    let folder: MirrorFolder
    let staging: MirrorStaging
    let keys: [Ed25519.PublicKey]
    var report = MirrorReport(app: "", channel: "", version: "", manifest: "", changed: false)
    /// Staged files and where they go, in the order they are put in place.
    var moves: [(staged: String, target: String)] = []
    /// Files of the folder a verified release still names: never pruned.
    var named = Set<String>()
    /// Verified files already in the folder, by path (hashing an archive once per run).
    var verified: [String: Bool] = [:]
    /// File lists read in this run (verified and parsed), by their SHA-256; nil: refused.
    var fileLists: [String: ReleaseFileList?] = [:]

    var manifestURL: URL { request.manifestURL }
    var downloader: Downloader { mirror.downloader }

    init(mirror: SiteMirror, request: MirrorRequest, folder: MirrorFolder, staging: MirrorStaging, keys: [Ed25519.PublicKey]) {
        self.mirror = mirror
        self.request = request
        self.folder = folder
        self.staging = staging
        self.keys = keys
    }

    mutating func perform() async throws -> MirrorReport {
        let manifestPath = try folder.local(manifestURL).get()
        let channelFolder = (manifestPath as NSString).deletingLastPathComponent
        report.manifest = folder.relative(manifestPath)
        // Nothing is read, written or pruned through a symbolic link inside the folder.
        try folder.refuseLinks(channelPaths(channelFolder, manifest: manifestPath))
        // 1. The manifest, its roots, and the manifest verified with the newest root.
        let body = try await small(manifestURL, cap: 64 * 1024)
        let unverified = try StrictJSON.parseObject(body, limits: .manifest, source: manifestURL.absoluteString)
        let trusted = try await walkRoots(
            from: .implicit(trusting: keys, app: unverified["app"]?.stringValue ?? "", channel: unverified["channel"]?.stringValue ?? ""))
        let verifier = ManifestVerifier(root: trusted)
        let manifest = try verifier.verify(bytes: body, source: manifestURL.absoluteString).get(context: "manifest \(manifestURL.absoluteString)")
        report.app = manifest.app
        report.channel = manifest.channel
        report.version = manifest.version.description
        if !trusted.isImplicit, manifest.app != trusted.app {
            throw SiteMirrorError(.refused, "manifest \(manifestURL.absoluteString) is for \(manifest.app), its trust root for \(trusted.app)")
        }
        if let expires = manifest.expires, expires <= request.now {
            throw SiteMirrorError(
                .stale,
                "release \(manifest.version) at \(manifestURL.absoluteString) expired at \(RFC3339.format(expires)): the origin's feed is stale; "
                    + "the mirror keeps what it holds")
        }
        // 2. Never older than what the mirror holds (a device's floor and replay rules).
        let heldBytes = FileManager.default.contents(atPath: manifestPath)
        let held = heldBytes.flatMap { bytes -> Manifest? in
            (try? StrictJSON.parseObject(bytes, limits: .manifest)).flatMap { try? Manifest.validate($0).get() }
        }
        if let held {
            guard held.app == manifest.app, held.channel == manifest.channel else {
                throw SiteMirrorError(
                    .refused,
                    "\(manifestPath) holds \(held.app) channel \(held.channel), the origin serves \(manifest.app) channel \(manifest.channel): "
                        + "mirror each channel to its own path")
            }
            if manifest.version < held.version {
                throw SiteMirrorError(
                    .replay,
                    "the origin serves release \(manifest.version), below \(held.version) the mirror holds: a rollback refused; the mirror keeps \(held.version)"
                )
            }
            if manifest.published < held.published {
                throw SiteMirrorError(
                    .replay,
                    "the origin's manifest of release \(manifest.version) was published at \(RFC3339.format(manifest.published)), before the one the mirror "
                        + "holds (\(RFC3339.format(held.published))): a stale cache or a replay; the mirror keeps what it holds")
            }
        }
        // 3. The index and the releases a device may take: the current one, those it offers
        //    alongside and those it pins, each verified.
        let index = try await fetchIndex(app: manifest.app, channel: manifest.channel)
        let indexed = index?.releases.validReleases(with: verifier) ?? []
        var carried = [manifest]
        for wanted in manifest.alongside + manifest.pins.map(\.release) where !carried.contains(where: { $0.version == wanted.version }) {
            if let found = indexed.first(where: wanted.names) {
                carried.append(found)
            } else {
                report.notes.append("release \(wanted.version), which the manifest names, is not in index.json as signed: not mirrored")
            }
        }
        // A device whose shell the current release does not run on takes an older one.
        for fallback in ShellFallbacks.releases(indexed, current: manifest, now: request.now)
        where !carried.contains(where: { $0.version == fallback.version }) {
            carried.append(fallback)
        }
        // Archives the folder holds are the bases of patches.
        var known: [Version: Manifest] = [:]
        for release in indexed + (held.map { [$0] } ?? []) + carried where known[release.version] == nil { known[release.version] = release }
        for release in indexed { named.formUnion(localFiles(of: release)) }
        // 4. The rollout role's restriction, cohort files, archives and patches.
        let restriction = try await fetchRestriction(for: manifest, root: trusted)
        // Patches are taken from the releases the site's devices run: those the held
        // manifest named (a device on an older one takes the archive, or the origin's patch).
        let bases = Set(held.map { [$0.version] + $0.alongside.map(\.version) + $0.pins.map(\.release.version) } ?? [])
        for release in carried {
            for cohort in release.cohorts { try await mirrorCohort(cohort) }
            let archive = try await mirrorArchive(release, known: known, bases: bases)
            try await mirrorFileList(release, archive: archive, known: known, bases: bases)
        }
        // 5. In place: roots were staged first, then the immutable files; then the index, the
        //    restriction and the manifest last, so no device reads a manifest whose files are missing.
        let manifestChanged = heldBytes != body
        if let index {
            try stageIfChanged(index.bytes, at: channelFolder + "/index.json")
        }
        let restrictionPath = channelFolder + "/restriction.json"
        if let restriction {
            try stageIfChanged(restriction, at: restrictionPath)
        }
        if manifestChanged { moves.append((try staging.stage(body), manifestPath)) }
        let candidates = pruneCandidates(channelFolder)
        try folder.refuseLinks(moves.map(\.target) + candidates)
        try staging.commit(moves)
        report.written = moves.map { folder.relative($0.target) }
        if restriction == nil, FileManager.default.fileExists(atPath: restrictionPath) {
            unlink(restrictionPath)
            report.pruned.append(folder.relative(restrictionPath))
        }
        if index == nil, FileManager.default.fileExists(atPath: channelFolder + "/index.json") {
            unlink(channelFolder + "/index.json")
            report.pruned.append(folder.relative(channelFolder + "/index.json"))
        }
        for release in carried { named.formUnion(localFiles(of: release)) }
        report.pruned += prune(candidates)
        report.changed = !moves.isEmpty || !report.pruned.isEmpty
        return report
    }

    // MARK: - Reading from the origin

    /// A small document from the origin (at most `cap` bytes).
    mutating func small(_ url: URL, cap: Int) async throws -> Data {
        try await smallIfPresent(url, cap: cap, optional: false) ?? Data()
    }

    /// A small document from the origin; nil for a 404 or 410 when `optional`.
    mutating func smallIfPresent(_ url: URL, cap: Int, optional: Bool = true) async throws -> Data? {
        report.originRequests += 1
        let fetched: Downloader.SmallFetch
        do {
            fetched = try await downloader.fetchSmall(url, cap: cap)
        } catch let error as UpdaterError where optional && (error.httpStatus == 404 || error.httpStatus == 410) {
            return nil
        }
        guard case .fetched(let body, _) = fetched else {
            throw SiteMirrorError(.internalError, "GET \(url.absoluteString): not modified without a condition")
        }
        report.originBytes += Int64(body.count)
        return body
    }

    func url(_ relative: String) throws -> URL {
        guard let url = URL(string: relative, relativeTo: manifestURL)?.absoluteURL else {
            throw SiteMirrorError(.refused, "\"\(relative)\" is not a URL relative to \(manifestURL.absoluteString)")
        }
        return url
    }

    /// The device's walk (TUF §5.3): from the `--trust` keys through `root/N.json`, each
    /// root the folder holds checked again, each new one fetched, verified and staged; the
    /// newest must not have expired.
    mutating func walkRoots(from start: TrustRoot) async throws -> TrustRoot {
        var trusted = start
        for _ in 0..<RootChain.maxSteps {
            let relative = "root/\(trusted.version + 1).json"
            let url = try url(relative)
            let path = try folder.local(url).get()
            if let local = FileManager.default.contents(atPath: path), local.count <= TrustRoot.maxBytes,
                case .trusted(let next) = RootChain.verifyNext(local, after: trusted, source: path)
            {
                trusted = next
                named.insert(path)
                continue
            }
            guard let body = try await smallIfPresent(url, cap: TrustRoot.maxBytes) else { break }
            trusted = try RootChain.verifyNext(body, after: trusted, source: url.absoluteString).get()
            moves.append((try staging.stage(body), path))
            named.insert(path)
        }
        if let expired = RootChain.expiryProblem(trusted, now: request.now, source: "trust root \(trusted.version)") { throw expired }
        return trusted
    }

    /// `index.json`, parsed, for the manifest's app and channel; nil when the origin has none.
    mutating func fetchIndex(app: String, channel: String) async throws -> (releases: ReleaseIndex, bytes: Data)? {
        let url = try url("index.json")
        guard let body = try await smallIfPresent(url, cap: StrictJSON.Limits.index.maxBytes) else { return nil }
        let index = try ReleaseIndex.parse(body, source: url.absoluteString)
        guard index.app == app, index.channel == channel else {
            throw SiteMirrorError(
                .refused, "\(url.absoluteString) is the index of \(index.app) channel \(index.channel), not \(app) channel \(channel)")
        }
        return (index, body)
    }

    /// The restriction's bytes when it is in force for `manifest` under `root` (verified as a
    /// device verifies it); nil without a rollout role, without a file, or when it does not
    /// hold. A restriction that does not verify refuses the run.
    mutating func fetchRestriction(for manifest: Manifest, root: TrustRoot) async throws -> Data? {
        guard root.rollout != nil else { return nil }
        let url = try url("restriction.json")
        guard let body = try await smallIfPresent(url, cap: Restriction.maxBytes) else { return nil }
        switch try Restriction.check(body, for: manifest, root: root, now: request.now, source: url.absoluteString) {
        case .inForce: return body
        case .ignored(let why):
            report.notes.append("\(url.absoluteString): \(why); not mirrored")
            return nil
        }
    }

    // MARK: - Files of releases

    /// The folder's paths of the files `release` names (archive, patches, cohort files).
    func localFiles(of release: Manifest) -> [String] {
        var urls = [release.url] + release.cohorts.map(\.path)
        if case .success(let delta)? = release.delta { urls += delta.patches.map(\.url) + (delta.files.map { [$0.url] } ?? []) }
        return urls.compactMap { try? folder.local(relative: $0).get() }
    }

    /// True when `path` holds exactly `size` bytes of SHA-256 `sha256`.
    mutating func holds(_ path: String, size: Int64, sha256: String) async -> Bool {
        let key = "\(path)\u{0}\(sha256)"
        if let known = verified[key] { return known }
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, Int64(st.st_size) == size else {
            verified[key] = false
            return false
        }
        let digest = try? await BlockingExecutor.run { try Digest.hex(.sha256, ofFileAt: path) }
        verified[key] = digest == sha256
        return digest == sha256
    }

    /// A cohort file the manifest names, checked against its signed digest and count.
    mutating func mirrorCohort(_ cohort: CohortReference) async throws {
        let url = try url(cohort.path)
        let path = try folder.local(url).get()
        named.insert(path)
        if let local = FileManager.default.contents(atPath: path), CohortFile.problem([UInt8](local), reference: cohort) == nil { return }
        let size = cohort.count * CohortFile.recordBytes
        let body = try await small(url, cap: max(size, 1))
        if let problem = CohortFile.problem([UInt8](body), reference: cohort) {
            throw SiteMirrorError(.refused, "cohort file \(url.absoluteString) \(problem); the mirror keeps what it holds")
        }
        moves.append((try staging.stage(body), path))
    }

    /// The release's archive, held, rebuilt from a patch or downloaded, and the patches to
    /// it from releases whose archive the folder holds (what the site's devices hold).
    /// Returns where the archive's verified bytes are (in the folder or staged), nil when
    /// it is on another origin.
    @discardableResult
    mutating func mirrorArchive(_ release: Manifest, known: [Version: Manifest], bases: Set<Version>) async throws -> String? {
        let archiveURL = try url(release.url)
        let archivePath: String
        switch folder.local(archiveURL) {
        case .success(let path): archivePath = path
        case .failure(let why):
            report.notes.append("release \(release.version): \(why.message); devices fetch it from there")
            return nil
        }
        let archiveHeld = await holds(archivePath, size: release.size, sha256: release.sha256)
        // Patches from a release the folder holds: one is the rebuild's input, each serves
        // the site's devices on that release.
        var patches: [(patch: ReleaseDelta.Patch, base: String, file: String)] = []
        var delta: ReleaseDelta?
        if case .success(let d)? = release.delta {
            delta = d
            for patch in d.patches.sorted(by: { $0.size < $1.size }) where bases.contains(patch.from) {
                guard let base = known[patch.from], let baseURL = try? url(base.url), let basePath = try? folder.local(baseURL).get(),
                    await holds(basePath, size: base.size, sha256: base.sha256)
                else { continue }
                let patchURL = try url(patch.url)
                guard case .success(let patchPath) = folder.local(patchURL) else {
                    report.notes.append("release \(release.version): patch \(patch.url) is on another origin: not mirrored")
                    continue
                }
                if await holds(patchPath, size: patch.size, sha256: patch.sha256) {
                    patches.append((patch, basePath, patchPath))
                } else {
                    do {
                        let staged = try await download(patchURL, size: patch.size, sha256: patch.sha256)
                        moves.append((staged, patchPath))
                        patches.append((patch, basePath, staged))
                    } catch let error as UpdaterError {
                        // A patch that is missing or not the signed one: devices then take the archive.
                        report.notes.append("release \(release.version): patch from \(patch.from) refused (\(error.message)): not mirrored")
                    }
                }
            }
        }
        if !archiveHeld, let delta {
            for candidate in patches {
                let output = staging.newName()
                let work = staging.newName()
                let rebuild = ArchiveRebuild(limits: mirror.limits)
                do {
                    try await BlockingExecutor.run { [release] in
                        try rebuild.rebuild(
                            release, delta: delta, patch: candidate.patch, baseArchive: candidate.base, patchFile: candidate.file, work: work,
                            output: output)
                    }
                    moves.append((output, archivePath))
                    report.rebuilt.append(folder.relative(archivePath))
                    return output
                } catch {
                    unlink(output)
                    let message = (error as? any ClientctlError)?.message ?? "\(error)"
                    report.notes.append(
                        "release \(release.version): not rebuilt from the patch from \(candidate.patch.from) (\(message)); downloading the archive")
                }
            }
        }
        if archiveHeld { return archivePath }
        let staged = try await download(archiveURL, size: release.size, sha256: release.sha256)
        moves.append((staged, archivePath))
        return staged
    }

    /// Downloads `url` into the staging folder, checked against the signed size and digest.
    mutating func download(_ url: URL, size: Int64, sha256: String) async throws -> String {
        let name = staging.newName()
        let result = try await downloader.download(url, to: name, expectedSize: size, expectedDigest: sha256, algorithm: .sha256)
        report.originBytes += result.size - result.resumedFrom
        report.originRequests += result.requests
        return name
    }

    /// Stages `bytes` for `path` unless the folder holds them already.
    mutating func stageIfChanged(_ bytes: Data, at path: String) throws {
        if FileManager.default.contents(atPath: path) == bytes { return }
        moves.append((try staging.stage(bytes), path))
    }

    /// The paths of the channel's folder a run reads, writes or prunes before it knows the
    /// releases: the manifest, the index, the restriction, and the folders of roots,
    /// patches, file lists, objects and cohorts (each cohort's own folder too).
    func channelPaths(_ channelFolder: String, manifest: String) -> [String] {
        let names = ["index.json", "restriction.json", "root", "patches", "files", "objects", "cohorts"]
        var paths = [manifest] + names.map { channelFolder + "/" + $0 }
        let cohorts = (try? FileManager.default.contentsOfDirectory(atPath: channelFolder + "/cohorts")) ?? []
        paths += cohorts.sorted().map { channelFolder + "/cohorts/" + $0 }
        return paths
    }

    /// The archives, patches, file lists, objects and cohort files of the channel's folder
    /// that a prune removes unless a verified release names them (what publish writes
    /// there; nothing else is touched).
    func pruneCandidates(_ channelFolder: String) -> [String] {
        var candidates: [String] = []
        let fm = FileManager.default
        for name in (try? fm.contentsOfDirectory(atPath: channelFolder)) ?? []
        where name.hasPrefix("v") && ArchiveRebuild.format(of: name) != nil {
            candidates.append(channelFolder + "/" + name)
        }
        for name in (try? fm.contentsOfDirectory(atPath: channelFolder + "/patches")) ?? [] where name.hasSuffix(".zst") {
            candidates.append(channelFolder + "/patches/" + name)
        }
        for cohort in (try? fm.contentsOfDirectory(atPath: channelFolder + "/cohorts")) ?? [] where !cohort.hasPrefix(".") {
            for name in (try? fm.contentsOfDirectory(atPath: channelFolder + "/cohorts/" + cohort)) ?? [] where name.hasSuffix(".txt") {
                candidates.append(channelFolder + "/cohorts/" + cohort + "/" + name)
            }
        }
        for name in (try? fm.contentsOfDirectory(atPath: channelFolder + "/files")) ?? [] where name.hasSuffix(".json") {
            candidates.append(channelFolder + "/files/" + name)
        }
        for name in (try? fm.contentsOfDirectory(atPath: channelFolder + "/objects")) ?? []
        where name.utf8.count == 64 && name.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
            candidates.append(channelFolder + "/objects/" + name)
        }
        return candidates
    }

    /// Removes the `candidates` no verified release names any longer. Objects are named by
    /// the file lists of the releases carried.
    func prune(_ candidates: [String]) -> [String] {
        var pruned: [String] = []
        for path in candidates.sorted() where !named.contains(path) {
            if unlink(path) == 0 { pruned.append(folder.relative(path)) }
        }
        return pruned
    }
}

import ClientFoundation
import Foundation

/// `clientctl repo`: a signed apt repository of packaged apps, one suite per channel
/// (`stable`, `beta`), maintained by driving Debian's `reprepro` as `package` drives
/// `dpkg-deb` (docs/packaging.md#an-apt-repository).
///
/// Every change is made on a copy of the repository beside it (a staging folder: `conf`,
/// `db` and `dists` copied, `pool` hard-linked, since reprepro only adds and removes pool
/// files), exported, given by-hash indexes and `Acquire-By-Hash: yes`, signed with the
/// key's own GNUPGHOME (``ArchiveSigner``), and exchanged with the repository in one
/// `renameat2(RENAME_EXCHANGE)`: a failure at any step leaves the repository as it was,
/// and a reader never sees half a change. Every suite is exported and signed again on every
/// change, so each change also renews every suite's `Valid-Until`.
///
/// Commands that change the repository take turns on a lock of its parent folder
/// (``withLock(_:_:)``) and read its state, its packages and decide only while they hold it:
/// commands started together run one after the other, each on what the one before left.
package enum AptRepository {
    /// The file that makes a folder one of ours: `conf/clientctl.json`.
    package static let stateFile = "conf/clientctl.json"
    /// The format of ``stateFile``.
    package static let format = "clientctl-apt-repo-v1"
    /// The architectures every suite carries.
    package static let architectures = ["amd64", "arm64"]
    /// Seconds a reprepro run may take.
    static let timeout: Duration = .seconds(600)

    /// What the repository's `conf/clientctl.json` holds.
    package struct State: Codable, Sendable, Equatable {
        package var format: String
        /// `Origin:` and `Label:` of every suite's Release (what unattended-upgrades matches).
        package var origin: String
        /// `Valid-Until` is this many days after each signing.
        package var validForDays: Int
        package var suites: [String]
        /// `Phased-Update-Percentage` by suite and package (absent: 100, every machine).
        package var phases: [String: [String: Int]]? = nil
    }

    /// One package of a suite.
    package struct Entry: Sendable, Equatable {
        package var suite: String
        package var package: String
        package var version: String
        package var architecture: String
        /// The file in the pool, relative to the repository.
        package var file: String
        /// Its `Phased-Update-Percentage` in the suite (nil: not phased, every machine).
        package var phase: Int? = nil
    }

    /// What happened to one .deb of `repo add`.
    package struct Added: Sendable {
        package var package: String
        package var version: String
        package var architecture: String
        /// The version it replaced in the suite, if any.
        package var replaced: String?
        /// The suite held these bytes already: nothing changed for it.
        package var unchanged: Bool
    }

    /// The fields of a .deb that `repo add` reads.
    struct Deb {
        var path: String
        var package: String
        var version: String
        var architecture: String
        var sha256: String
    }

    /// Settings a change may set (absent: the repository's, or the defaults for a new one).
    package struct Settings: Sendable {
        package var origin: String?
        package var validForDays: Int?
        package init(origin: String? = nil, validForDays: Int? = nil) {
            self.origin = origin
            self.validForDays = validForDays
        }
    }

    // MARK: - Commands

    /// Adds `debs` to `suite` (the repository and the suite are made when missing).
    /// - Throws: ``PackageError``; the repository is then as it was.
    /// With `phase`, each package's `Phased-Update-Percentage` in the suite becomes it.
    package static func add(
        debs: [String], repo: String, suite: String, keyFile: String, settings: Settings = Settings(), phase: Int? = nil
    ) throws -> [Added] {
        let repo = repo.absoluteStandardizedPath
        try checkSuite(suite)
        try check(settings)
        if let phase { try checkPhase(phase) }
        guard !debs.isEmpty else { throw PackageError(.invalidArgument, "name at least one .deb to add") }
        // A folder that is not a repository is refused before the key is imported or a lock
        // taken; what the repository holds is read only under the lock, below.
        _ = try openState(repo)
        let inspected = try debs.map { try inspect($0.absoluteStandardizedPath) }
        var seen = Set<String>()
        for deb in inspected where !seen.insert(deb.package + "_" + deb.architecture).inserted {
            throw PackageError(.invalidArgument, "\(deb.package) (\(deb.architecture)) is named twice: a suite holds one version of it")
        }
        for deb in inspected where !architectures.contains(deb.architecture) {
            throw PackageError(
                .invalidArgument, "\(deb.path) is for \(deb.architecture): the repository carries \(architectures.joined(separator: ", "))")
        }
        let signer = try ArchiveSigner(keyFile: keyFile)
        defer { signer.close() }
        return try withLock(repo) {
            // Read, decided and changed under the lock: a `repo` command that held it before
            // (another add started at the same moment) is seen whole, never raced.
            let state = try openState(repo)
            let entries = try state.map { try list(repo: repo, state: $0) } ?? []
            var results: [Added] = []
            var changed: [Deb] = []
            for deb in inspected {
                let result = try decide(deb, suite: suite, entries: entries, repo: repo)
                results.append(result)
                if !result.unchanged { changed.append(deb) }
            }
            var newState = merged(state, suite: suite, settings: settings)
            if let phase {
                for deb in inspected { newState.phases = setting(newState.phases, suite: suite, package: deb.package, to: phase) }
            }
            if changed.isEmpty && newState == state { return results }
            try change(repo: repo, state: newState, signer: signer) { staging in
                if !changed.isEmpty {
                    _ = try reprepro(staging, ["includedeb", suite] + changed.map(\.path))
                }
            }
            return results
        }
    }

    /// Removes `package` from `suite`.
    /// - Returns: the versions removed (one per architecture).
    /// - Throws: ``PackageError`` `.notFound` when the suite does not hold it.
    package static func remove(package: String, repo: String, suite: String, keyFile: String) throws -> [Entry] {
        try changeHeld(package: package, repo: repo, suite: suite, keyFile: keyFile) { state, _ in
            state.phases?[suite]?[package] = nil  // added again later, it starts unphased
            return { staging in _ = try reprepro(staging, ["remove", suite, package]) }
        }
    }

    /// Sets `package`'s `Phased-Update-Percentage` in `suite` (apt ≥ 2.1.16 installs an
    /// upgrade to it on that share of machines, chosen by machine ID; 100: every machine).
    /// - Returns: the suite's entries of the package, with their new phase.
    /// - Throws: ``PackageError`` `.notFound` when the suite does not hold it, `.invalidArgument`.
    package static func phase(package: String, percent: Int, repo: String, suite: String, keyFile: String) throws -> [Entry] {
        try checkPhase(percent)
        let held = try changeHeld(package: package, repo: repo, suite: suite, keyFile: keyFile) { state, _ in
            let before = state
            state.phases = setting(state.phases, suite: suite, package: package, to: percent)
            return state == before ? nil : { _ in }
        }
        return held.map { entry in
            var entry = entry
            entry.phase = percent
            return entry
        }
    }

    /// What `remove` and `phase` share: under the lock, the suite's entries of `package`
    /// (refused when there are none) and the state, which `body` may change; the step it
    /// returns runs on the staged copy, or nothing changes when it returns nil.
    static func changeHeld(
        package: String, repo: String, suite: String, keyFile: String,
        _ body: (inout State, [Entry]) throws -> ((String) throws -> Void)?
    ) throws -> [Entry] {
        let repo = repo.absoluteStandardizedPath
        try checkSuite(suite)
        try DebianFields.checkPackageName(package)
        guard try openState(repo) != nil else { throw PackageError(.notFound, "\(repo): no such apt repository") }
        let signer = try ArchiveSigner(keyFile: keyFile)
        defer { signer.close() }
        return try withLock(repo) {
            guard var state = try openState(repo) else { throw PackageError(.notFound, "\(repo): no such apt repository") }
            let held = try list(repo: repo, state: state).filter { $0.suite == suite && $0.package == package }
            guard !held.isEmpty else { throw PackageError(.notFound, "suite \(suite) of \(repo) does not hold \(package)") }
            if let step = try body(&state, held) { try change(repo: repo, state: state, signer: signer, step) }
            return held
        }
    }

    /// Exports and signs every suite again (a new `Date` and `Valid-Until`), changing no
    /// package: what a timer runs more often than `validForDays`.
    /// - Returns: the suites signed.
    package static func sign(repo: String, keyFile: String, settings: Settings = Settings()) throws -> [String] {
        let repo = repo.absoluteStandardizedPath
        try check(settings)
        guard try openState(repo) != nil else { throw PackageError(.notFound, "\(repo): no such apt repository") }
        let signer = try ArchiveSigner(keyFile: keyFile)
        defer { signer.close() }
        return try withLock(repo) {
            guard var state = try openState(repo) else { throw PackageError(.notFound, "\(repo): no such apt repository") }
            if let origin = settings.origin { state.origin = origin }
            if let days = settings.validForDays { state.validForDays = days }
            try change(repo: repo, state: state, signer: signer) { _ in }
            return state.suites
        }
    }

    /// Every package of every suite (or of `suite`), as reprepro lists them.
    /// - Throws: ``PackageError`` `.notFound` (no repository, no such suite), `.notARepository`.
    package static func list(repo: String, suite: String? = nil) throws -> [Entry] {
        let repo = repo.absoluteStandardizedPath
        guard let state = try openState(repo) else { throw PackageError(.notFound, "\(repo): no such apt repository") }
        if let suite, !state.suites.contains(suite) {
            throw PackageError(.notFound, "\(repo) has no suite \(suite) (it has \(state.suites.joined(separator: ", ")))")
        }
        return try list(repo: repo, state: state).filter { suite == nil || $0.suite == suite }
    }

    /// A read-only view of the repository for `repo push`: its `dists/` and `pool/` hard-linked
    /// into a folder beside it, made holding the repository's lock, so a change made while
    /// the push uploads (which replaces the folder) cannot mix two states. The caller
    /// removes the returned folder.
    /// - Throws: ``PackageError`` `.notFound` (no repository), `.notARepository`, `.busy`, `.io`.
    package static func snapshot(repo: String) throws -> String {
        let repo = repo.absoluteStandardizedPath
        // Before the lock, which would make a missing parent folder.
        guard try openState(repo) != nil else { throw PackageError(.notFound, "\(repo): no such apt repository") }
        return try withLock(repo) {
            guard try openState(repo) != nil else { throw PackageError(.notFound, "\(repo): no such apt repository") }
            let parent = (repo as NSString).deletingLastPathComponent
            let snapshot = parent + "/.\((repo as NSString).lastPathComponent).clientctl-push-\(getpid())"
            try? AtomicFile.removeTree(snapshot)
            do {
                try FileManager.default.createDirectory(atPath: snapshot, withIntermediateDirectories: false)
                for part in ["dists", "pool"] where FileManager.default.fileExists(atPath: repo + "/" + part) {
                    _ = try ToolRun(tool: "cp", arguments: ["-a", "--link", repo + "/" + part, snapshot + "/" + part], timeout: timeout)
                        .run(scratch: snapshot)
                }
            } catch {
                try? AtomicFile.removeTree(snapshot)
                if let error = error as? PackageError { throw error }
                throw PackageError(.io, "cannot make \(snapshot): \(error.localizedDescription)")
            }
            return snapshot
        }
    }
}

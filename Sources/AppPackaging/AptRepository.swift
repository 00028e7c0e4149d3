import ClientFoundation
import ClientUpdater
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
    static let timeout: Double = 600

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

    /// The repository's state file, or `nil` when `repo` is missing or an empty folder.
    /// - Throws: `.notARepository` for a file, or a folder with other things in it.
    static func openState(_ repo: String) throws -> State? {
        var st = stat()
        guard lstat(repo, &st) == 0 else { return nil }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw PackageError(.notARepository, "--repo \(repo) is not a folder") }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: repo)) ?? []
        if names.isEmpty { return nil }
        let path = repo + "/" + stateFile
        guard let data = try? BoundedFile.read(path, cap: 1 << 20, code: PackageErrorCode.notARepository),
            let state = try? JSONDecoder().decode(State.self, from: data), state.format == format
        else {
            throw PackageError(
                .notARepository, "--repo \(repo) holds files but no \(stateFile): not a repository clientctl repo made, left as it is")
        }
        return state
    }

    // MARK: - Checks

    /// A suite is a channel's name: `[a-z0-9][a-z0-9.+-]*`, at most 64 characters.
    static func checkSuite(_ suite: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.+-")
        guard let first = suite.first, first.isLetter || first.isNumber, suite.count <= 64, suite.allSatisfy({ allowed.contains($0) }) else {
            throw PackageError(.invalidArgument, "--suite '\(suite)' is not a suite name ([a-z0-9][a-z0-9.+-]*, e.g. stable or beta)")
        }
    }

    static func check(_ settings: Settings) throws {
        if let days = settings.validForDays, !(1...3650).contains(days) {
            throw PackageError(.invalidArgument, "--valid-for must be 1 to 3650 days, not \(days)")
        }
        if let origin = settings.origin {
            try DebianFields.checkLine(origin, flag: "--origin")
        }
    }

    /// A phase is a percentage: 0 (nobody yet) to 100 (every machine).
    static func checkPhase(_ percent: Int) throws {
        guard (0...100).contains(percent) else { throw PackageError(.invalidArgument, "a phase is 0 to 100 percent, not \(percent)") }
    }

    /// `phases` with `package` of `suite` at `percent`.
    static func setting(_ phases: [String: [String: Int]]?, suite: String, package: String, to percent: Int) -> [String: [String: Int]] {
        var phases = phases ?? [:]
        phases[suite, default: [:]][package] = percent
        return phases
    }

    /// The .deb's control fields; refused unless `clientctl package` made it.
    static func inspect(_ path: String) throws -> Deb {
        var st = stat()
        guard stat(path, &st) == 0 else { throw PackageError(.notFound, "\(path): no such file") }
        guard st.st_mode & S_IFMT == S_IFREG else { throw PackageError(.foreignPackage, "\(path) is not a regular file") }
        let output: String
        do {
            output = try ToolRun(
                tool: "dpkg-deb", arguments: ["--field", path, "Package", "Version", "Architecture", PackageTexts.templateField],
                timeout: 120
            ).run(scratch: NSTemporaryDirectory()).standardOutput
        } catch let error as PackageError where error.code == .toolFailed && ToolRun.find("dpkg-deb") != nil {
            throw PackageError(.foreignPackage, "\(path) is not a Debian package (\(error.message))")
        }
        var fields: [String: String] = [:]
        for line in output.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard let package = fields["Package"], let version = fields["Version"], let architecture = fields["Architecture"] else {
            throw PackageError(.foreignPackage, "\(path) is not a Debian package (no Package, Version or Architecture)")
        }
        guard fields[PackageTexts.templateField] == "/usr/share/\(package)/\(DeviceTemplate.fileName)" else {
            throw PackageError(
                .foreignPackage, "\(path) was not made by clientctl package (no \(PackageTexts.templateField) field): repo carries packaged apps only"
            )
        }
        return Deb(path: path, package: package, version: version, architecture: architecture, sha256: try Digest.hex(.sha256, ofFileAt: path))
    }

    /// What adding `deb` to `suite` does: unchanged (the same bytes), refused (other bytes
    /// for a version the pool holds, or an older version than the suite's), or added.
    static func decide(_ deb: Deb, suite: String, entries: [Entry], repo: String) throws -> Added {
        var added = Added(package: deb.package, version: deb.version, architecture: deb.architecture, replaced: nil, unchanged: false)
        for entry in entries where entry.package == deb.package && entry.architecture == deb.architecture && entry.version == deb.version {
            let held = try? Digest.hex(.sha256, ofFileAt: repo + "/" + entry.file)
            guard held == deb.sha256 else {
                throw PackageError(
                    .versionConflict,
                    "\(deb.package) \(deb.version) (\(deb.architecture)) is in suite \(entry.suite) with other bytes: a version is published once (raise --version)"
                )
            }
            if entry.suite == suite { added.unchanged = true }
        }
        if let current = entries.first(where: { $0.suite == suite && $0.package == deb.package && $0.architecture == deb.architecture }),
            current.version != deb.version
        {
            guard try compareVersions(current.version, "lt", deb.version) else {
                throw PackageError(
                    .versionConflict,
                    "suite \(suite) holds \(deb.package) \(current.version), newer than \(deb.version): apt would not install it (remove it first)")
            }
            added.replaced = current.version
        }
        return added
    }

    static func compareVersions(_ a: String, _ op: String, _ b: String) throws -> Bool {
        do {
            _ = try ToolRun(tool: "dpkg", arguments: ["--compare-versions", a, op, b], timeout: 60).run(scratch: NSTemporaryDirectory())
            return true
        } catch let error as PackageError where error.message.contains("exit status 1") {
            return false
        }
    }

    static func merged(_ state: State?, suite: String, settings: Settings) -> State {
        var state = state ?? State(format: format, origin: "clientctl", validForDays: 7, suites: [])
        if !state.suites.contains(suite) { state.suites = (state.suites + [suite]).sorted() }
        if let origin = settings.origin { state.origin = origin }
        if let days = settings.validForDays { state.validForDays = days }
        return state
    }

    // MARK: - reprepro

    /// `conf/distributions`: one distribution per suite (codename = suite), component
    /// `main`, indexes plain, gzip and xz, `Valid-Until` ``State/validForDays`` ahead.
    static func distributions(_ state: State) -> String {
        state.suites.map { suite in
            """
            Codename: \(suite)
            Suite: \(suite)
            Origin: \(state.origin)
            Label: \(state.origin)
            Architectures: \(architectures.joined(separator: " "))
            Components: main
            Description: \(state.origin) packaged apps, \(suite) channel (clientctl repo)
            DebIndices: Packages Release . .gz .xz
            DebOverride: override.\(suite)
            ValidFor: \(state.validForDays)d

            """
        }.joined(separator: "\n")
    }

    static func reprepro(_ base: String, _ arguments: [String]) throws -> ToolRun.Output {
        try ToolRun(tool: "reprepro", arguments: ["--basedir", base, "--silent"] + arguments, timeout: timeout).run(scratch: base)
    }

    static func list(repo: String, state: State) throws -> [Entry] {
        var entries: [Entry] = []
        for suite in state.suites {
            let output = try reprepro(repo, ["--list-format", "${package}\\t${version}\\t${architecture}\\t${$filekey}\\n", "list", suite])
            for line in output.standardOutput.split(separator: "\n") {
                let fields = line.split(separator: "\t").map(String.init)
                guard fields.count == 4 else { continue }
                entries.append(
                    Entry(
                        suite: suite, package: fields[0], version: fields[1], architecture: fields[2], file: fields[3],
                        phase: state.phases?[suite]?[fields[0]]))
            }
        }
        return entries
    }

    // MARK: - The change

    /// Copies the repository to a staging folder beside it, writes `state` and
    /// `conf/distributions`, runs `body` on it, exports and signs every suite, and exchanges
    /// it with the repository. The staging folder is removed whatever happens.
    static func change(repo: String, state: State, signer: ArchiveSigner, _ body: (String) throws -> Void) throws {
        let parent = (repo as NSString).deletingLastPathComponent
        let name = (repo as NSString).lastPathComponent
        let staging = parent + "/.\(name).clientctl-staging-\(getpid())"
        try? AtomicFile.removeTree(staging)
        do {
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        } catch {
            throw PackageError(.io, "cannot create \(staging): \(error.localizedDescription)")
        }
        defer { try? AtomicFile.removeTree(staging) }
        for part in ["conf", "db", "dists", "pool"] where FileManager.default.fileExists(atPath: repo + "/" + part) {
            // The pool's files are never changed in place (reprepro adds and removes them):
            // hard links. The database and indexes are: real copies.
            let flags = part == "pool" ? ["-a", "--link"] : ["-a"]
            _ = try ToolRun(tool: "cp", arguments: flags + [repo + "/" + part, staging + "/" + part], timeout: timeout).run(scratch: staging)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.makeDirectory(staging + "/conf")
        try AtomicFile.write(try encoder.encode(state) + Data("\n".utf8), to: staging + "/" + stateFile)
        try AtomicFile.write(Data(distributions(state).utf8), to: staging + "/conf/distributions")
        for suite in state.suites {
            // reprepro's override file (reprepro(1), "override files"): "PACKAGE FIELD VALUE"
            // lines, merged into the package's stanza of the suite's Packages index.
            let lines = (state.phases?[suite] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) Phased-Update-Percentage \($0.value)\n" }
            try AtomicFile.write(
                Data(("# Phased-Update-Percentage per package (clientctl repo phase)\n" + lines.joined()).utf8),
                to: staging + "/conf/override.\(suite)")
        }
        try body(staging)
        _ = try reprepro(staging, ["reoverride"] + state.suites)
        _ = try reprepro(staging, ["export"] + state.suites)
        for suite in state.suites {
            let release = staging + "/dists/\(suite)/Release"
            try addByHash(release: release)
            try signer.sign(release: release)
        }
        try exchange(staging, repo)
    }

    /// Copies every index the Release names (SHA256) to `by-hash/SHA256/HASH` beside it and
    /// adds `Acquire-By-Hash: yes`, so apt fetches indexes by their hash and never mixes an
    /// index with a Release of another change. Earlier by-hash files stay for clients that
    /// read an older InRelease.
    static func addByHash(release: String) throws {
        let folder = (release as NSString).deletingLastPathComponent
        guard let data = FileManager.default.contents(atPath: release), let text = String(data: data, encoding: .utf8) else {
            throw PackageError(.io, "cannot read \(release)")
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var inSHA256 = false
        for line in lines {
            if !line.hasPrefix(" ") {
                inSHA256 = line == "SHA256:"
                continue
            }
            guard inSHA256 else { continue }
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count == 3 else { continue }
            let (hash, path) = (parts[0], parts[2])
            let target = folder + "/" + (path as NSString).deletingLastPathComponent + "/by-hash/SHA256/" + hash
            if FileManager.default.fileExists(atPath: target) { continue }
            try AtomicFile.makeDirectory((target as NSString).deletingLastPathComponent)
            guard let bytes = FileManager.default.contents(atPath: folder + "/" + path) else {
                throw PackageError(.io, "cannot read \(folder)/\(path)")
            }
            try AtomicFile.write(bytes, to: target)
        }
        guard !lines.contains("Acquire-By-Hash: yes"), let at = lines.firstIndex(where: { $0 == "MD5Sum:" || $0 == "SHA256:" }) else { return }
        lines.insert("Acquire-By-Hash: yes", at: at)
        try AtomicFile.write(Data(lines.joined(separator: "\n").utf8), to: release)
    }

    /// `renameat2(RENAME_EXCHANGE)` of the staging folder and the repository (a rename when
    /// the repository does not exist yet); the old repository, now at `staging`, is removed.
    static func exchange(_ staging: String, _ repo: String) throws {
        var st = stat()
        if lstat(repo, &st) != 0 {
            guard rename(staging, repo) == 0 else { throw PackageError(.io, "cannot create \(repo): \(String(cString: strerror(errno)))") }
            return
        }
        typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else {
            throw PackageError(.io, "this C library has no renameat2: cannot replace \(repo) atomically")
        }
        let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
        let renameExchange: UInt32 = 1 << 1
        if renameat2(AT_FDCWD, staging, AT_FDCWD, repo, renameExchange) == 0 { return }
        // A file system without RENAME_EXCHANGE: two renames, the old tree put back when the
        // second fails (a reader may then find no repository for that moment).
        guard errno == EINVAL || errno == ENOSYS else {
            throw PackageError(.io, "cannot replace \(repo): \(String(cString: strerror(errno)))")
        }
        let aside = staging + ".old"
        guard rename(repo, aside) == 0 else { throw PackageError(.io, "cannot replace \(repo): \(String(cString: strerror(errno)))") }
        guard rename(staging, repo) == 0 else {
            let failure = String(cString: strerror(errno))
            rename(aside, repo)
            throw PackageError(.io, "cannot replace \(repo): \(failure)")
        }
        guard rename(aside, staging) == 0 else { throw PackageError(.io, "cannot move \(aside): \(String(cString: strerror(errno)))") }
    }

    /// Runs `body` holding an exclusive lock on the repository's parent folder (the
    /// repository itself is replaced by each change), waiting up to a minute for another
    /// `clientctl repo`.
    static func withLock<T>(_ repo: String, _ body: () throws -> T) throws -> T {
        let parent = (repo as NSString).deletingLastPathComponent
        try AtomicFile.makeDirectory(parent)
        let fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw PackageError(.io, "cannot open \(parent): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let deadline = Date().addingTimeInterval(60)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK, Date() < deadline else {
                throw PackageError(.busy, "another clientctl repo is changing a repository in \(parent): try again")
            }
            usleep(100_000)
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}

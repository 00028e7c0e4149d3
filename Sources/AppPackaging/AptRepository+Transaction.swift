import ClientFoundation
import Foundation

// One change as one transaction: a staging copy, exported, by-hash, signed, exchanged
// with the repository in one rename, under the repository's lock.
extension AptRepository {
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
        let held: Flock?
        do {
            held = try Flock.waiting(parent, .folder, for: .seconds(60), firstDelay: .milliseconds(100), maxDelay: .milliseconds(100))
        } catch .cannotOpen(let err), .cannotLock(let err) {
            throw PackageError(.io, "cannot lock \(parent): \(String(cString: strerror(err)))")
        } catch {
            throw PackageError(.io, "cannot lock \(parent): \(error)")
        }
        guard let held else { throw PackageError(.busy, "another clientctl repo is changing a repository in \(parent): try again") }
        return try withExtendedLifetime(held) { try body() }
    }
}

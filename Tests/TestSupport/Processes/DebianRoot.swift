import ClientFoundation
import Foundation

/// A minimal Debian 12 (bookworm) root for tests that judge packages with apt itself: made
/// once by `mmdebstrap --variant=apt` and cached as a tarball under
/// `/var/cache/clientctl-tests/` (written to a temporary name and renamed, so a killed run
/// leaves no half tarball), then extracted into a temporary folder per test.
///
/// The mirror is this machine's own (the `URIs:` of the `bookworm` stanza of
/// `/etc/apt/sources.list.d/debian.sources`, or a `deb` line of `/etc/apt/sources.list`),
/// read at run time; the root keeps no apt source of its own: whatever apt sees in it is
/// what the test put there.
///
/// Commands run in the root with `bwrap` (its own mount namespace: `/proc` and `/dev` are
/// mounted there and gone with it, whatever happens to the test), on the host's network
/// (so 127.0.0.1 is the test's server), with a clean environment and `LC_ALL=C` (apt's
/// messages in English).
public struct DebianRoot: Sendable {
    /// The cache of tarballs.
    public static let cacheFolder = "/var/cache/clientctl-tests"

    /// The root folder (inside a temporary folder the value's owner keeps).
    public let path: String

    /// Extracts the cached root (made first when missing) holding `packages` into `folder`.
    public static func make(in folder: String, including packages: [String]) async throws -> DebianRoot {
        let tarball = try await tarball(including: packages)
        let path = folder + "/root"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let untar = try await Subprocess.run("tar", ["-x", "-p", "--numeric-owner", "-f", tarball, "-C", path], timeout: .seconds(300))
        guard untar.status == 0 else { throw HarnessError("tar -x \(tarball): \(untar.errorOutput)") }
        return DebianRoot(path: path)
    }

    /// `path/relative` (relative to the root's `/`).
    public func callAsFunction(_ relative: String) -> String { path + "/" + relative }

    /// Runs `command` inside the root as root.
    ///
    /// Not `--die-with-parent`: that is `PR_SET_PDEATHSIG`, which fires when the *thread*
    /// that started bwrap ends (prctl(2)), and a test starts it from a dispatch worker
    /// thread, which libdispatch ends after a few idle seconds. A CI run lost an
    /// `unattended-upgrade` that way in the middle of dpkg's unpack ("dpkg was
    /// interrupted"). bwrap stays in the process group `Subprocess` starts, so a timeout
    /// still kills the whole sandbox.
    @discardableResult
    public func run(_ command: [String], timeout: Duration = .seconds(300)) async throws -> Subprocess.Result {
        let sandbox = [
            "--bind", path, "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--cap-add", "ALL", "--",
            "/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive", "HOME=/root",
        ]
        return try await Subprocess.run("bwrap", sandbox + command, timeout: timeout)
    }

    /// `apt-get -q -y ARGUMENTS` in the root.
    @discardableResult
    public func apt(_ arguments: [String]) async throws -> Subprocess.Result {
        try await run(["apt-get", "-q", "-y"] + arguments)
    }

    /// The installed version of `package`, or `nil`.
    public func installedVersion(_ package: String) async throws -> String? {
        let query = try await run(["dpkg-query", "-W", "-f", "${Status} ${Version}", package])
        let parts = query.output.split(separator: " ")
        guard query.status == 0, parts.count == 4, parts[2] == "installed" else { return nil }
        return String(parts[3])
    }

    // MARK: - The cached tarball

    /// The tarball of a bookworm root with `packages` installed: made once, atomically.
    public static func tarball(including packages: [String]) async throws -> String {
        let names = Array(Set(packages)).sorted()
        let key = String(Digest.hex(.sha256, of: Data(names.joined(separator: ",").utf8)).prefix(12))
        let tarball = cacheFolder + "/bookworm-apt-\(key).tar"
        if FileManager.default.fileExists(atPath: tarball) { return tarball }
        try FileManager.default.createDirectory(atPath: cacheFolder, withIntermediateDirectories: true)
        // One maker at a time (another test process may be making it): a lock file of the cache.
        let fd = open(cacheFolder + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw HarnessError("cannot open \(cacheFolder)/.lock") }
        defer { close(fd) }
        // Blocks on a thread of its own until the other maker lets go (the kernel wakes it).
        let locked = try await offload { () -> Bool in
            while flock(fd, LOCK_EX) != 0 { guard errno == EINTR else { return false } }
            return true
        }
        guard locked else { throw HarnessError("cannot lock \(cacheFolder)/.lock") }
        defer { flock(fd, LOCK_UN) }
        if FileManager.default.fileExists(atPath: tarball) { return tarball }
        let partial = tarball + ".partial-\(getpid())"
        defer { unlink(partial) }
        let made = try await Subprocess.run(
            "mmdebstrap",
            [
                "--variant=apt", "--format=tar", "--include=" + names.joined(separator: ","),
                // The root's apt knows no source: the tests put there the ones they judge.
                "--customize-hook=rm -f \"$1/etc/apt/sources.list\"; rm -rf \"$1\"/var/lib/apt/lists/*",
                "bookworm", partial, try mirror(),
            ], timeout: .seconds(1200))
        guard made.status == 0 else { throw HarnessError("mmdebstrap failed (\(made.status)): \(made.errorOutput.suffix(2000))") }
        guard rename(partial, tarball) == 0 else { throw HarnessError("cannot rename \(partial): \(String(cString: strerror(errno)))") }
        return tarball
    }

    /// This machine's Debian mirror for bookworm, read from its apt configuration.
    public static func mirror() throws -> String {
        if let text = try? String(contentsOfFile: "/etc/apt/sources.list.d/debian.sources", encoding: .utf8) {
            for stanza in text.components(separatedBy: "\n\n") {
                let lines = stanza.split(separator: "\n").filter { !$0.hasPrefix("#") }
                let field = { (name: String) in
                    lines.first { $0.hasPrefix(name + ":") }.map { $0.dropFirst(name.count + 1).split(separator: " ").map(String.init) } ?? []
                }
                if field("Suites").contains("bookworm"), field("Types").contains("deb"), let uri = field("URIs").first { return uri }
            }
        }
        if let text = try? String(contentsOfFile: "/etc/apt/sources.list", encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init).filter { !$0.hasPrefix("[") && !$0.hasSuffix("]") }
                if words.count >= 3, words[0] == "deb", words[2] == "bookworm" { return words[1] }
            }
        }
        throw HarnessError("no bookworm mirror in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list")
    }
}

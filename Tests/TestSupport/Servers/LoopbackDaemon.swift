import Foundation
import Synchronization

/// A real server program (tinyproxy, nginx) run in the foreground by a test, with its
/// own config, on a free port of 127.0.0.1; killed by ``stop()``
/// or when the value is released.
public final class LoopbackDaemon: Sendable {
    public let port: UInt16
    public let name: String
    private let process: Process
    /// `stop()` is idempotent.
    private let stopped = Mutex(false)

    /// Starts `executable` with `arguments` and waits until something accepts on `port`.
    /// - Throws: when the program exits or does not listen within about 5 s.
    public init(_ executable: String, _ arguments: [String], port: UInt16, log: String) throws {
        self.port = port
        name = (executable as NSString).lastPathComponent
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = out
        process.standardError = out
        try process.runUnmasked()
        try? out.close()
        let listening = { Self.accepts(port) }
        try? Poll.untilBlocking("the daemon to listen or end", timeout: 5, every: .milliseconds(20)) { listening() || !process.isRunning }
        if listening() { return }
        stop()
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        throw DaemonError("\(name) did not listen on 127.0.0.1:\(port): \(text.suffix(600))")
    }

    deinit { stop() }

    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first, process.isRunning else { return }
        // SIGKILL at once: its state lives in the test's temp folder, and nginx without a
        // master process can take seconds to act on SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Whether a TCP connection to 127.0.0.1:`port` succeeds.
    public static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// The first of `names` found in `PATH` or the sbin folders, or nil.
    public static func find(_ names: String...) -> String? {
        let paths =
            (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
            + ["/usr/sbin", "/usr/bin", "/sbin"]
        for name in names {
            for dir in paths where FileManager.default.isExecutableFile(atPath: dir + "/" + name) { return dir + "/" + name }
        }
        return nil
    }
}

public struct DaemonError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// tinyproxy (Debian `tinyproxy`) on 127.0.0.1 with a config of the test's own: plain
/// HTTP proxying and `CONNECT` to any port (no `ConnectPort` line, tinyproxy.conf(5)),
/// every request logged at `LogLevel Connect`.
public final class TinyProxy: Sendable {
    public let daemon: LoopbackDaemon
    public let logFile: String
    public var port: UInt16 { daemon.port }
    public var url: String { "http://127.0.0.1:\(daemon.port)" }

    /// - Parameter extraConfig: more tinyproxy.conf lines (e.g. `BasicAuth user password`).
    public init(in folder: String, extraConfig: String = "") throws {
        guard let binary = LoopbackDaemon.find("tinyproxy") else { throw DaemonError("tinyproxy not installed") }
        let port = try LoopbackHTTPServer.unusedPort()
        logFile = folder + "/tinyproxy.log"
        let config = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 30
            MaxClients 50
            LogFile "\(logFile)"
            LogLevel Connect
            PidFile "\(folder)/tinyproxy.pid"
            Allow 127.0.0.1
            DisableViaHeader Yes
            \(extraConfig)

            """
        try config.write(toFile: folder + "/tinyproxy.conf", atomically: true, encoding: .utf8)
        daemon = try LoopbackDaemon(binary, ["-d", "-c", folder + "/tinyproxy.conf"], port: port, log: folder + "/tinyproxy.out")
    }

    /// The request lines tinyproxy logged (`CONNECT 127.0.0.1:443 HTTP/1.1`, `GET http://…`).
    public var requests: [String] {
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let r = line.range(of: "Request (file descriptor ") else { return nil }
            let rest = line[r.upperBound...]
            guard let colon = rest.range(of: "): ") else { return nil }
            return String(rest[colon.upperBound...])
        }
    }

    public func stop() { daemon.stop() }
}

import AuthenticatedTime
import ClientFoundation
import Foundation
import NIOCore
import NIOPosix
import SignedManifest

/// A real Roughtime server from outside the project: `roughly` from PyPI (installed by
/// Scripts/roughtime-server into a venv of its own), run as its command line runs it:
/// `roughly -v server run --host 127.0.0.1 --port PORT --no-grease` with a long-term key of
/// the test's own (ROUGHLY_PRIVATE_KEY), optionally under Debian's `faketime` with a clock
/// years off. Greasing (deliberately broken answers, RFC 10049 §7) is off so each test
/// knows what the server answers.
public final class RoughlyServer: Sendable {
    package let process: ChildProcess.Running
    /// The server as a client asks it.
    public let server: RoughtimeServer
    public let stderrPath: String

    /// The `roughly` command, installed once per test process.
    public static let command = Task { () throws -> String in
        let result = try await Subprocess.run("bash", [ClientctlBinary.packagePath("Scripts/roughtime-server")], gate: nil, timeout: .seconds(600))
        guard result.status == 0, let path = result.output.split(separator: "\n").last.map(String.init) else {
            throw HarnessError("Scripts/roughtime-server exited \(result.status): \(result.errorOutput.suffix(2000))")
        }
        return path
    }

    /// Starts a server on a free loopback port and waits until it listens.
    /// - Parameters:
    ///   - offset: a `faketime` offset (`+5y`) for a server whose clock is that far off.
    ///   - radius: its RADI in seconds (roughly's default is 3).
    public init(scratch: String, offset: String? = nil, radius: Int = 3) async throws {
        let roughly = try await Self.command.value
        let key = try Ed25519.PrivateKey.generate()
        // The PKCS#8 DER of an Ed25519 key ends with its 32-byte seed, which roughly takes.
        let der = try Data(base64Encoded: key.pemRepresentation().split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()) ?? Data()
        let seed = Data(der.suffix(32)).base64EncodedString()
        var lastError = ""
        for attempt in 1...3 {
            let port = try await Self.freeUDPPort()
            let stderrPath = scratch + "/roughly-\(port)-\(attempt).stderr"
            _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
            let arguments = ["-v", "server", "run", "--host", "127.0.0.1", "--port", "\(port)", "--no-grease", "--radius", "\(radius)"]
            let (executable, all) = offset.map { ("faketime", ["-f", $0, roughly] + arguments) } ?? (roughly, arguments)
            let process = try ChildProcess(
                executable, all, environment: ["ROUGHLY_PRIVATE_KEY": seed, "FAKETIME_DONT_FAKE_MONOTONIC": "1"], input: .none,
                standardOutput: .discard, standardError: .file(stderrPath)
            ).start()
            let listening = "Listening on 127.0.0.1:\(port)"
            try await Poll.until("roughly to listen or end", timeout: 60) {
                !process.isRunning || Self.read(stderrPath).contains(listening)
            }
            if process.isRunning {
                self.process = process
                self.stderrPath = stderrPath
                server = try RoughtimeServer(host: "127.0.0.1", port: port, publicKey: key.publicKey.rawRepresentation)
                return
            }
            // Another process took the port meanwhile: try another.
            lastError = Self.read(stderrPath)
            _ = await process.wait()
        }
        throw HarnessError("roughly did not start: \(lastError.suffix(2000))")
    }

    /// A server no test stopped: killed, and reaped by its handle's own thread (a `deinit`
    /// runs on Swift's cooperative pool, where it must not block).
    deinit {
        process.signal(SIGKILL)
        FaketimeLeftovers.remove(pid: process.pid)
    }

    /// Kills the server and reaps it (a test calls it last, which also keeps it alive until
    /// then). The whole process group: `faketime` runs the server as a child of its own.
    public func stop() {
        process.signal(SIGKILL)
        _ = process.waitBlocking()
        FaketimeLeftovers.remove(pid: process.pid)
    }

    /// Stops the server answering without closing its socket (SIGSTOP to its group).
    public func pause() { process.signal(SIGSTOP) }

    public static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// A UDP port free on 127.0.0.1 a moment ago (bound, read, closed).
    public static func freeUDPPort() async throws -> Int {
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }
}

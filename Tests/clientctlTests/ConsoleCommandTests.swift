import Foundation
import TestSupport
import Testing

/// `clientctl console` as the binary: it prints where it listens on stdout, serves the
/// login page with its security headers, appends a failed login to the trail, and ends
/// cleanly on SIGTERM; bad flags and a release key are refused before it listens.
@Suite struct ConsoleCommandTests {
    struct Files {
        let dir: TemporaryDirectory
        var common: [String]

        init(collector: String) async throws {
            dir = try TemporaryDirectory("console-command")
            try FileManager.default.createDirectory(atPath: dir("releases"), withIntermediateDirectories: true)
            try await Self.run(["keygen", "--out", dir("rollout")])
            try Data("only the operator knows\n".utf8).write(to: URL(fileURLWithPath: dir("alice.password")))
            try await Self.run([
                "operator", "add", "alice", "--role", "operator", "--operators", dir("operators.json"), "--password-file", dir("alice.password"),
            ])
            for name in ["read", "admin"] {
                try Data("\(name)-token-0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: dir("\(name).token")))
                chmod(dir("\(name).token"), 0o600)
            }
            common = [
                "--operators", dir("operators.json"), "--collector", collector, "--token-file", dir("read.token"), "--admin-token-file",
                dir("admin.token"), "--out", dir("releases"), "--key", dir("rollout.pem"), "--audit", dir("audit.jsonl"),
            ]
        }

        static func run(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let r = try await ClientctlBinary.run(args)
            #expect(r.status == 0, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        }
    }

    @Test func itListensServesTheLoginPageAndStopsOnSIGTERM() async throws {
        let files = try await Files(collector: "http://127.0.0.1:9/")
        let console = try await ConsoleProcess(arguments: files.common, scratch: files.dir.path)
        #expect(console.stdout == "console on http://127.0.0.1:\(console.port)/\n")
        let login = try await Curl.request(console.baseURL + "/login")
        #expect(login.status == 200 && login.body.contains("name=\"password\""))
        #expect(login["content-security-policy"]?.hasPrefix("default-src 'none'") == true && login["x-content-type-options"] == "nosniff")
        let wrong = try await Curl.request(
            console.baseURL + "/login", method: "POST",
            headers: ["Content-Type: application/x-www-form-urlencoded", "Origin: \(console.baseURL)"], body: Data("name=alice&password=no".utf8))
        #expect(wrong.status == 401)
        let show = try await ClientctlBinary.run(["audit", "verify", files.dir("audit.jsonl"), "--trust", files.dir("rollout.pub.pem")])
        #expect(show.status == 0, "\(show.output) \(show.errorOutput)")
        #expect(console.stop() == 0, "\(console.stderr)")
    }

    @Test func badFlagsAndAReleaseKeyAreRefusedBeforeItListens() async throws {
        let files = try await Files(collector: "http://127.0.0.1:9/")
        let badListen = try await ClientctlBinary.run(["console", "--listen", "nowhere"] + files.common)
        #expect(badListen.status == 64 && badListen.errorOutput.contains("--listen nowhere: not HOST:PORT"), "\(badListen.errorOutput)")
        let everywhere = try await ClientctlBinary.run(["console", "--listen", "0.0.0.0:8090"] + files.common)
        #expect(everywhere.status == 64 && everywhere.errorOutput.contains("needs --public-url"), "\(everywhere.errorOutput)")
        let missing = try await ClientctlBinary.run(
            ["console"] + files.common.map { $0 == files.dir("operators.json") ? files.dir("none.json") : $0 })
        #expect(missing.status == 66, "\(missing.errorOutput)")

        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: files.dir("bad.pem")))
        let badTLS = try await ClientctlBinary.run(
            ["console", "--listen", "127.0.0.1:0"] + files.common + ["--tls-cert", files.dir("bad.pem"), "--tls-key", files.dir("bad.pem")])
        #expect(badTLS.status == 65 && badTLS.errorOutput.contains("not a PEM certificate and key"), "\(badTLS.status) \(badTLS.errorOutput)")

        // A channel whose root trusts the key as its release key: the console refuses it.
        let channel = files.dir("releases/stable")
        try FileManager.default.createDirectory(atPath: channel, withIntermediateDirectories: true)
        let pub = files.dir("rollout.pub.pem")
        try await Files.run([
            "root", "init", files.dir("root.json"), "--app", "com.example.notes", "--channel", "stable", "--root-key", pub, "--release-key", pub,
            "--expires", "30d",
        ])
        try await Files.run(["root", "sign", files.dir("root.json"), "--key", files.dir("rollout.pem")])
        try FileManager.default.createDirectory(atPath: channel + "/root", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: files.dir("root.json"), toPath: channel + "/root/1.json")
        let releaseKey = try await ClientctlBinary.run(["console", "--listen", "127.0.0.1:0"] + files.common)
        #expect(releaseKey.status == 64 && releaseKey.errorOutput.contains("the console holds the rollout key only"), "\(releaseKey.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: files.dir("audit.jsonl")))
    }

    /// With `--tls-cert` and `--tls-key` it serves HTTPS, says so, and its session cookie
    /// is `Secure`; POSTs must come from the https origin.
    @Test func underTLSItServesHTTPSAndItsCookieIsSecure() async throws {
        let files = try await Files(collector: "http://127.0.0.1:9/")
        let ca = try TestCA(in: files.dir("ca"))
        let (certificate, key) = try ca.issue("console")
        let console = try await ConsoleProcess(
            arguments: files.common + ["--tls-cert", certificate, "--tls-key", key], scratch: files.dir.path, tls: true)
        #expect(console.stdout == "console on https://127.0.0.1:\(console.port)/\n")
        func curl(_ extra: [String]) async throws -> String {
            let r = try await Subprocess.run(
                "curl", ["-sS", "--max-time", "20", "--cacert", ca.certificate, "-D", "-", "-o", "/dev/null"] + extra, gate: nil)
            return r.output + r.errorOutput
        }
        let page = try await curl([console.baseURL + "/login"])
        #expect(page.hasPrefix("HTTP/1.1 200") && page.lowercased().contains("content-security-policy: default-src 'none'"), "\(page)")
        let form = ["-H", "Content-Type: application/x-www-form-urlencoded", "--data-binary", "name=alice&password=only the operator knows"]
        let login = try await curl(["-H", "Origin: \(console.baseURL)"] + form + [console.baseURL + "/login"])
        #expect(login.hasPrefix("HTTP/1.1 303"), "\(login)")
        let cookie = login.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") } ?? ""
        #expect(cookie.contains("; Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
        let plainOrigin = try await curl(["-H", "Origin: http://127.0.0.1:\(console.port)"] + form + [console.baseURL + "/login"])
        #expect(plainOrigin.hasPrefix("HTTP/1.1 403"), "\(plainOrigin)")
        #expect(console.stop() == 0, "\(console.stderr)")
    }
}

import ClientUpdater
import Foundation
import SignedManifest
import TestSupport
import Testing

/// `--sign-command` as an outside service: bounded output, a time limit that kills the
/// command's whole process group, its input as a private regular file, and exit statuses
/// that say whose fault a failure is (69 the signer failed or ran over, 65 what it returned
/// is not a signature of that key). Run as the built binary against `publish`, which holds
/// the channel lock while it signs.
@Suite struct SignCommandTests {
    let dir: TemporaryDirectory
    let sample = ClientctlBinary.packagePath("Fixtures/sample-client")

    init() throws {
        dir = try TemporaryDirectory("sign-command")
    }

    /// An Ed25519 key pair made by openssl: `NAME.pem`, `NAME.pub.pem`; returns its key id.
    func key(_ name: String) async throws -> String {
        #expect(try await Subprocess.run("openssl", ["genpkey", "-algorithm", "ed25519", "-out", dir("\(name).pem")]).status == 0)
        #expect(try await Subprocess.run("openssl", ["pkey", "-in", dir("\(name).pem"), "-pubout", "-out", dir("\(name).pub.pem")]).status == 0)
        return try Ed25519.PublicKey(pemFile: dir("\(name).pub.pem")).keyId
    }

    /// `clientctl publish … --key NAME.pub.pem --sign-command CMD`, in `dir`. `timeout(1)`
    /// is only a backstop, so that the clientctl of before this fix (which hung) fails the
    /// test instead of hanging the suite; no assertion depends on time.
    func publish(keys: [String], command: String, extra: [String] = []) async throws -> Subprocess.Result {
        let arguments =
            [
                "-s", "KILL", "600", ClientctlBinary.path, "publish", sample, "--app", "com.example.notes", "--channel", "stable",
                "--version", "1.0.0", "--min-shell", "1.0.0", "--out", dir("rel"), "--sign-command", command,
            ] + keys.flatMap { ["--key", dir("\($0).pub.pem")] } + extra
        return try await Subprocess.run("timeout", arguments, directory: dir.path)
    }

    func nothingPublished() -> Bool { !FileManager.default.fileExists(atPath: dir("rel/stable/manifest.json")) }

    /// A command that writes more than a pipe holds is read while it runs and refused as
    /// "not a signature" (before: clientctl read 4096 bytes, then waited for a command that
    /// waited for it, forever, holding the channel lock).
    @Test func aCommandWritingMegabytesIsRefusedNotDeadlocked() async throws {
        let id = try await key("r1")
        let r = try await publish(keys: ["r1"], command: "head -c 1048576 /dev/zero")
        #expect(r.status == 65, "\(r.errorOutput)")
        #expect(r.errorOutput.contains("sign command 'head -c 1048576 /dev/zero' for key \(id) wrote more than 4096 bytes: not a signature"))
        #expect(nothingPublished())
    }

    /// A command that never ends is killed at `--sign-timeout` with everything it started
    /// (its process group), and the release is refused with exit 69.
    @Test func aCommandThatNeverEndsIsKilledWithItsChildren() async throws {
        let id = try await key("r1")
        let command = "echo waiting for a touch >&2; sleep 3600 & echo $! > child.pid; wait"
        let r = try await publish(keys: ["r1"], command: command, extra: ["--sign-timeout", "1"])
        #expect(r.status == 69, "\(r.errorOutput)")
        #expect(
            r.errorOutput.contains(
                "sign command '\(command)' for key \(id) did not finish within 1 s and was killed with its process group "
                    + "(--sign-timeout): waiting for a touch"), "\(r.errorOutput)")
        let pidText = try String(contentsOfFile: dir("child.pid"), encoding: .utf8)
        let child = try #require(Int32(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))
        // SIGKILL to the group is delivered asynchronously: on a loaded machine the child may
        // still be on its way out a moment after clientctl exits. Waited for, bounded.
        try await Poll.until("the command's background child \(child) to be killed with its group", timeout: 10) { !Self.isRunning(child) }
        #expect(nothingPublished())
        let again = try await publish(keys: ["r1"], command: "false")
        #expect(again.status == 69, "the channel lock was released: \(again.errorOutput)")
    }

    /// Each failure of the command is an outside failure with its own status and a message
    /// that names the command, the key and what the command said on stderr.
    @Test func failuresAreTheSignersNotBugs() async throws {
        let id = try await key("r1")
        _ = try await key("other")
        let cases: [(command: String, status: Int32, message: String)] = [
            ("false", 69, "sign command 'false' for key \(id) failed (status 1)"),
            ("echo 'token not present' >&2; exit 3", 69, "failed (status 3): token not present"),
            ("kill -9 $$", 69, "was killed by signal 9"),
            ("nonexistent-signer-tool", 69, "failed (status 127): "),
            ("printf abcde", 65, "sign command 'printf abcde' for key \(id) wrote 5 bytes; a raw Ed25519 signature is 64"),
            ("head -c 64 /dev/zero", 65, "made a signature that does not verify with that key (another key?)"),
            (
                "openssl pkeyutl -sign -rawin -inkey other.pem -in /dev/stdin", 65,
                "made a signature that does not verify with that key (another key?)"
            ),
        ]
        for c in cases {
            let r = try await publish(keys: ["r1"], command: c.command)
            #expect(r.status == c.status, "\(c.command): \(r.errorOutput)")
            #expect(r.errorOutput.contains(c.message), "\(c.command): \(r.errorOutput)")
            #expect(r.errorOutput.split(separator: "\n").count == 1, "one line: \(r.errorOutput)")
            #expect(nothingPublished())
        }
    }

    /// The command's stdin is a private regular file (so `openssl pkeyutl -rawin -in
    /// /dev/stdin` can sign in one shot: a pipe made OpenSSL 3.0 fail with "Could not
    /// allocate 0 bytes"), also named by CLIENTCTL_SIGN_INPUT, and removed afterwards.
    @Test func theInputIsAPrivateFileRemovedAfterwards() async throws {
        let r1 = try await key("r1")
        let r2 = try await key("r2")
        let command = """
            test -f /dev/stdin && stat -L -c %a /dev/stdin >> modes && stat -c %a "$(dirname "$CLIENTCTL_SIGN_INPUT")" >> modes \
            && echo "$CLIENTCTL_SIGN_INPUT" >> inputs && cmp -s /dev/stdin "$CLIENTCTL_SIGN_INPUT" \
            && openssl pkeyutl -sign -rawin -inkey "$CLIENTCTL_SIGN_KEY_ID.pem" -in /dev/stdin
            """
        try FileManager.default.copyItem(atPath: dir("r1.pem"), toPath: dir("\(r1).pem"))
        try FileManager.default.copyItem(atPath: dir("r2.pem"), toPath: dir("\(r2).pem"))
        let r = try await publish(keys: ["r1", "r2"], command: command)
        #expect(r.status == 0, "\(r.errorOutput)")
        #expect(try String(contentsOfFile: dir("modes"), encoding: .utf8) == "600\n700\n600\n700\n")
        let inputs = try String(contentsOfFile: dir("inputs"), encoding: .utf8).split(separator: "\n")
        #expect(inputs.count == 2)
        for input in inputs {
            #expect(!FileManager.default.fileExists(atPath: String(input)), "\(input) was left behind")
            #expect(!FileManager.default.fileExists(atPath: (String(input) as NSString).deletingLastPathComponent))
        }
        // Item 15 of issue 21: every signer is named once.
        #expect(r.output.contains("signed by keys \(r1), \(r2)\n"), "\(r.output)")
    }

    /// `root sign` names each signer once (it named the new ones twice).
    @Test func rootSignNamesEverySignerOnce() async throws {
        let a = try await key("a")
        let b = try await key("b")
        _ = try await key("r")
        let initRoot = try await ClientctlBinary.run(
            [
                "root", "init", dir("root-1.json"), "--app", "com.example.notes", "--channel", "stable", "--root-key", dir("a.pub.pem"),
                "--root-key", dir("b.pub.pem"), "--root-threshold", "2", "--release-key", dir("r.pub.pem"), "--expires", "30d",
            ])
        #expect(initRoot.status == 0, "\(initRoot.errorOutput)")
        let first = try await ClientctlBinary.run(["root", "sign", dir("root-1.json"), "--key", dir("a.pem")])
        #expect(first.output.components(separatedBy: a).count == 2, "\(first.output)")
        #expect(first.output.contains("1 new signature(s); signed by \(a); 1 of 2 own root signatures"), "\(first.output)")
        let both = try await ClientctlBinary.run(["root", "sign", dir("root-1.json"), "--key", dir("a.pem"), "--key", dir("b.pem")])
        #expect(both.output.components(separatedBy: a).count == 2 && both.output.components(separatedBy: b).count == 2, "\(both.output)")
        #expect(both.output.contains("1 new signature(s); signed by \(a), \(b); 2 of 2 own root signatures"), "\(both.output)")
    }

    /// True while `pid` exists and is not a zombie.
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        guard let close = stat.lastIndex(of: ")") else { return true }
        return !stat[close...].dropFirst(2).hasPrefix("Z")
    }
}

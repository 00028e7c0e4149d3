import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Issue 10, points 3 and 9: durations and config values out of range are refused at parse
/// time (64) and at every config load (78), local files are read with a cap, a planted
/// `lock` symlink is not followed; every failure leaves the root as it was.
@Suite struct BoundsCommandTests {
    /// Runs clientctl under timeout(1): a `serve` that wrongly starts ends as exit 124, not a hung test.
    func run(_ arguments: [String]) async throws -> Subprocess.Result {
        try await Subprocess.run("/usr/bin/timeout", ["20", ClientctlBinary.path] + arguments)
    }

    func initArguments(_ root: String, _ rig: ReleaseRig, _ extra: [String]) -> [String] {
        [
            "init", "--root", root, "--app", rig.app, "--channel", "stable",
            "--manifest-url", "file://" + rig.releases + "/stable/manifest.json",
            "--trust", rig.key + ".pub.pem", "--shell-version", "1.0.0",
        ] + extra
    }

    @Test(arguments: [
        ["--startup-timeout", "1e20"], ["--startup-timeout", "inf"], ["--startup-timeout", "nan"],
        ["--startup-timeout", "0"], ["--startup-timeout", "-1"], ["--keep", "0"],
        ["--max-unpacked-bytes", "-1"], ["--max-entries", "0"],
        // Names no signed manifest can carry (ReleaseIdentifier, one rule with publish and verify).
        ["--channel", ".hidden"], ["--channel", String(repeating: "c", count: 65)], ["--app", "-app"],
    ])
    func initRefusesOutOfRangeValuesAndCreatesNothing(_ flags: [String]) async throws {
        let rig = try await ReleaseRig(label: "bounds-init")
        let root = rig.tmp("fresh-root")
        let result = try await ClientctlBinary.run(initArguments(root, rig, flags))
        #expect(result.status == 64, "\(flags): \(result.errorOutput)")
        #expect(result.errorOutput.contains(flags[0]), "\(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: root), "\(flags): init created \(root)")
    }

    /// A key or trust root given to init is a local file like any other: a FIFO in its place
    /// (which `FileManager` waited on for ever) or a file past its cap ends at once with 64,
    /// naming the flag and the file, and creates nothing.
    @Test(arguments: ["--trust", "--trust-root"], ["fifo", "huge"])
    func initRefusesATrustFileThatIsAFIFOOrHuge(_ flag: String, _ kind: String) async throws {
        let rig = try await ReleaseRig(label: "bounds-trust")
        let file = rig.tmp("planted")
        if kind == "fifo" {
            #expect(mkfifo(file, 0o644) == 0)
        } else {
            #expect(FileManager.default.createFile(atPath: file, contents: nil) && truncate(file, 1 << 30) == 0)
        }
        let root = rig.tmp("fresh-root")
        var arguments = initArguments(root, rig, [])
        let at = try #require(arguments.firstIndex(of: "--trust"))
        arguments[at...at + 1] = [flag, file]  // the planted file instead of the rig's key
        let result = try await run(arguments)
        #expect(result.status == 64, "\(flag) \(kind): \(result.errorOutput)")
        let expected = kind == "fifo" ? "\(file) is not a regular file" : "\(file) is 1073741824 bytes, over the "
        #expect(result.errorOutput.contains(flag + " " + expected), "\(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: root), "init created \(root)")
    }

    @Test(arguments: [
        ["--startup-timeout", "1e20"], ["--startup-timeout", "inf"], ["--check-interval", "1e300"],
        ["--check-interval", "0.5"], ["--check-interval", "-3"], ["--check-interval", "nan"],
    ])
    func serveRefusesOutOfRangeDurations(_ flags: [String]) async throws {
        let rig = try await ReleaseRig(label: "bounds-serve")
        let before = try TreeSnapshot(rig.root)
        let result = try await run(["serve", "--root", rig.root, "--port", "0"] + flags)
        #expect(result.status == 64, "\(flags): \(result.errorOutput)")
        #expect(result.errorOutput.contains(flags[0]), "\(result.errorOutput)")
        #expect(try TreeSnapshot(rig.root) == before)
    }

    @Test(arguments: ["inf", "nan", "1e300"])
    func installRefusesAnEndlessLockWait(_ value: String) async throws {
        let rig = try await ReleaseRig(label: "bounds-wait")
        let result = try await ClientctlBinary.run(["install", "--root", rig.root, "--wait", value])
        #expect(result.status == 64, "\(value): \(result.errorOutput)")
        #expect(result.errorOutput.contains("--wait"), "\(result.errorOutput)")
    }

    /// Each edit makes config.json invalid; every command that loads it exits 78 naming the value.
    static let configEdits: [(String, @Sendable (inout [String: Any]) -> Void, String)] = [
        ("huge startup timeout", { $0["startupTimeoutSeconds"] = 1e20 }, "startupTimeoutSeconds"),
        ("negative unpack cap", { $0["limits"] = ["maxUnpackedBytes": -1, "maxEntries": 100, "maxArchiveBytes": 1000] }, "limits.maxUnpackedBytes"),
        ("zero entries", { $0["limits"] = ["maxUnpackedBytes": 1000, "maxEntries": 0, "maxArchiveBytes": 1000] }, "limits.maxEntries"),
        ("keep too large", { $0["keep"] = 1_000_000 }, "keep"),
        ("http to another host", { $0["manifestURL"] = "http://example.com/stable/manifest.json" }, "non-loopback host"),
        ("ftp manifest", { $0["manifestURL"] = "ftp://127.0.0.1/manifest.json" }, "unsupported scheme"),
        ("no trusted key", { $0["trustedKeys"] = [String]() }, "trustedKeys is empty"),
    ]

    @Test(arguments: 0..<configEdits.count)
    func everyLoadChecksTheConfig(_ i: Int) async throws {
        let (name, edit, expected) = Self.configEdits[i]
        let rig = try await ReleaseRig(label: "bounds-config")
        let path = rig.root + "/config.json"
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        edit(&object)
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        let before = try TreeSnapshot(rig.root)
        for command in [["status"], ["install"], ["serve", "--port", "0"], ["rollback"]] {
            let result = try await run(command + ["--root", rig.root])
            #expect(result.status == 78, "\(name), \(command[0]): \(result.status) \(result.errorOutput)")
            #expect(result.errorOutput.contains(expected), "\(name), \(command[0]): \(result.errorOutput)")
            #expect(result.errorOutput.split(separator: "\n").count == 1, "\(result.errorOutput)")
        }
        #expect(try TreeSnapshot(rig.root) == before, "\(name)")
    }

    @Test func worldWritableConfigIsRefused() async throws {
        let rig = try await ReleaseRig(label: "bounds-mode")
        #expect(chmod(rig.root + "/config.json", 0o666) == 0)
        let result = try await ClientctlBinary.run(["status", "--root", rig.root])
        #expect(result.status == 78)
        #expect(result.errorOutput.contains("writable by every user"), "\(result.errorOutput)")
        #expect(chmod(rig.root + "/config.json", 0o644) == 0)
        #expect(try await ClientctlBinary.run(["status", "--root", rig.root]).status == 0)
    }

    @Test func hugeConfigAndStateAreRefusedWithoutCopies() async throws {
        let rig = try await ReleaseRig(label: "bounds-huge")
        let big = Data(repeating: 0x20, count: 2 << 20)
        // A 2 MiB state.json (spaces: it would even parse as nothing) is not read, not moved aside.
        try big.write(to: URL(fileURLWithPath: rig.root + "/state.json"))
        let before = try TreeSnapshot(rig.root)
        for command in [["status"], ["install"], ["gc"]] {
            let result = try await ClientctlBinary.run(command + ["--root", rig.root])
            #expect(result.status == 78, "\(command): \(result.errorOutput)")
            #expect(result.errorOutput.contains("over the 1 MiB cap"), "\(result.errorOutput)")
        }
        #expect(try TreeSnapshot(rig.root) == before)
        try FileManager.default.removeItem(atPath: rig.root + "/state.json")
        var config = try Data(contentsOf: URL(fileURLWithPath: rig.root + "/config.json"))
        config.append(big)  // trailing whitespace keeps it valid JSON, but 2 MiB
        try config.write(to: URL(fileURLWithPath: rig.root + "/config.json"))
        let result = try await ClientctlBinary.run(["status", "--root", rig.root])
        #expect(result.status == 78)
        #expect(result.errorOutput.contains("config.json is \(config.count) bytes, over the 1 MiB cap"), "\(result.errorOutput)")
    }

    @Test func symlinkedLockIsNotFollowed() async throws {
        let rig = try await ReleaseRig(label: "bounds-lock")
        try? FileManager.default.removeItem(atPath: rig.root + "/lock")
        let target = rig.tmp("victim")
        try FileManager.default.createSymbolicLink(atPath: rig.root + "/lock", withDestinationPath: target)
        let result = try await ClientctlBinary.run(["install", "--root", rig.root])
        #expect(result.status == 78, "\(result.errorOutput)")
        #expect(result.errorOutput.contains("lock is a symbolic link"), "\(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: target), "the lock symlink was followed")
    }

    @Test(arguments: ["", "keys/"])
    func keygenRefusesAPrefixWithoutAName(_ out: String) async throws {
        let tmp = try TemporaryDirectory("keygen-empty")
        try FileManager.default.createDirectory(atPath: tmp("keys"), withIntermediateDirectories: true)
        let result = try await ClientctlBinary.run(["keygen", "--out", out], directory: tmp.path)
        #expect(result.status == 64, "\(result.errorOutput)")
        #expect(result.errorOutput.contains("--out"), "\(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: tmp(".pem")))
        #expect(!FileManager.default.fileExists(atPath: tmp("keys/.pem")))
    }
}

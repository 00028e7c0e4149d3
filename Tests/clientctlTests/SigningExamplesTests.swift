import Foundation
import SignedManifest
import TestSupport
import Testing

/// Every example of every `--help` page that signs, and the releasing guide's key ceremony,
/// run exactly as written: the examples are read from the built binary's help and from
/// docs/guides/releasing.md (never copied here, so they cannot drift) and run with `/bin/sh -c` in a
/// temporary folder holding the files they name (keys made by openssl, `build/`, release
/// folders made by clientctl itself). Nothing in them is substituted.
@Suite struct SigningExamplesTests {
    /// What a help page's examples need in the folder they run in.
    enum World: Sendable {
        /// Nothing.
        case empty
        /// An empty `keys/` folder (keygen does not make the folder of its PREFIX).
        case keyFolder
        /// `build/` and `keys/release.pem`.
        case publish
        /// `releases/stable` with 1.4.0 and 1.5.0 published with `k.pem`, 1.5.0 with a
        /// rollout when `rollout` is "running" or "paused".
        case channel(rollout: String?)
        /// Keys a, b (root), r1, r2, r3 (release) and `releases/stable/root/1.json` (root
        /// keys a+b, release keys r1+r2, thresholds 2); with `draft`, also `root-2.json`,
        /// the unsigned root after it.
        case roots(draft: Bool)
        /// A root asking for r1, r2 and r3, and 1.5.0 published with r1: pending.
        case pending
        /// A root with release key k and rollout key `rollout.pem`, and 1.4.0 and 1.5.0
        /// published with k.
        case rolloutRole
        /// `.channel(rollout: nil)` and `pilot-ids.txt`, two device ids.
        case cohort
        /// `releases/stable` with 1.4.0 and 1.5.0 published with `release.pem`.
        case media
    }

    /// The signing help pages, the folder their examples need, and whether each example
    /// runs in a folder of its own (alternatives) rather than one after the other.
    static let pages: [(command: [String], world: World, separately: Bool)] = [
        (["keygen"], .keyFolder, true),
        (["publish"], .publish, false),
        (["sign"], .pending, false),
        (["root"], .roots(draft: false), false),
        (["root", "init"], .roots(draft: false), false),
        (["root", "add-key"], .roots(draft: true), false),
        (["root", "remove-key"], .roots(draft: true), false),
        (["root", "set-threshold"], .roots(draft: true), false),
        (["root", "set-choosable"], .roots(draft: true), false),
        (["root", "sign"], .roots(draft: true), false),
        (["root", "verify"], .roots(draft: false), false),
        (["rollout"], .channel(rollout: "running"), false),
        (["rollout", "set"], .channel(rollout: nil), false),
        (["rollout", "pause"], .channel(rollout: "running"), true),
        (["rollout", "resume"], .channel(rollout: "paused"), true),
        (["rollout", "complete"], .channel(rollout: "running"), true),
        (["revoke"], .channel(rollout: nil), false),
        (["rollout", "restrict"], .rolloutRole, false),
        (["rollout", "pin"], .channel(rollout: nil), false),
        (["cohort"], .cohort, false),
        (["cohort", "set"], .cohort, false),
        (["cohort", "list"], .cohort, false),
        (["export"], .media, false),
    ]

    @Test(arguments: pages.indices)
    func helpExamplesRunAsWritten(page: Int) async throws {
        let (command, world, separately) = Self.pages[page]
        let help = try await ClientctlBinary.run(command + ["--help"], environment: ["COLUMNS": "80"])
        let examples = Self.examples(inHelp: help.output)
        #expect(!examples.isEmpty, "\(command): no examples in its help")
        var folder = try await Self.make(world)
        for example in examples {
            if separately { folder = try await Self.make(world) }
            let r = try await Self.shell(example, in: folder)
            #expect(r.status == 0, "clientctl \(command.joined(separator: " ")) --help: `\(example)` exited \(r.status): \(r.errorOutput)")
        }
    }

    /// The releasing guide's key ceremony, every `sh` block of the section in order, in one
    /// folder that holds only `build/`: keys, roots, releases, a pending release signed
    /// through `--sign-command` with openssl, and the rotation of a stolen release key.
    @Test func theKeyCeremonyOfTheReleasingGuideRunsAsWritten() async throws {
        let guide = try String(contentsOfFile: ClientctlBinary.packagePath("docs/guides/releasing.md"), encoding: .utf8)
        let blocks = Self.shellBlocks(inSection: "## Key ceremony", of: guide)
        #expect(blocks.count >= 5, "the ceremony's steps are sh blocks")
        let folder = try await Self.make(.empty)
        try FileManager.default.copyItem(atPath: ClientctlBinary.packagePath("Fixtures/sample-client"), toPath: folder.path + "/build")
        for block in blocks {
            let r = try await Self.shell("set -e\n" + block, in: folder)
            #expect(r.status == 0, "key ceremony (docs/guides/releasing.md): `\(block)` exited \(r.status): \(r.errorOutput)")
            if r.status != 0 { return }
        }
        let roots = try await Self.shell("clientctl root verify releases/stable", in: folder)
        #expect(roots.output.contains("root 2: "), "\(roots.output)")
    }

    // MARK: - Reading the examples

    /// The commands under `Examples:` in a help text: each starts on a line indented two
    /// spaces; deeper lines continue it (after a `\`).
    static func examples(inHelp text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix("Examples:") }) else { return [] }
        var examples: [String] = []
        for line in lines[(start + 1)...].prefix(while: { !$0.isEmpty }) {
            if line.hasPrefix("   "), !examples.isEmpty {
                examples[examples.count - 1] += "\n" + line
            } else {
                examples.append(line.trimmingCharacters(in: .whitespaces))
            }
        }
        return examples
    }

    /// The contents of the ```sh blocks between `heading` and the next heading.
    static func shellBlocks(inSection heading: String, of markdown: String) -> [String] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(heading) }) else { return [] }
        var blocks: [String] = []
        var current: [String]?
        for line in lines[(start + 1)...] {
            if current == nil, line.hasPrefix("#") || line.hasPrefix("<a id=") { break }
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```sh" {
                current = []
            } else if let block = current, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(block.joined(separator: "\n"))
                current = nil
            } else if current != nil {
                current?.append(line)
            }
        }
        return blocks
    }

    // MARK: - Running them

    /// `/bin/sh -c script` in `folder`, with the built `clientctl` first in `PATH`.
    static func shell(_ script: String, in folder: TemporaryDirectory) async throws -> Subprocess.Result {
        let bin = (ClientctlBinary.path as NSString).deletingLastPathComponent
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return try await Subprocess.run("/bin/sh", ["-c", script], environment: ["PATH": path], directory: folder.path)
    }

    /// A folder set up as `world` describes, with the same tools a user has.
    static func make(_ world: World) async throws -> TemporaryDirectory {
        let folder = try TemporaryDirectory("signing-examples")
        func run(_ script: String) async throws {
            let r = try await shell("set -e\n" + script, in: folder)
            try #require(r.status == 0, "setting up \(world): \(r.errorOutput)")
        }
        let keys = "for k in $KEYS; do openssl genpkey -algorithm ed25519 -out $k.pem; openssl pkey -in $k.pem -pubout -out $k.pub.pem; done"
        let sample = ClientctlBinary.packagePath("Fixtures/sample-client")
        let publish = "clientctl publish build/ --app com.example.notes --channel stable --min-shell 2.0.0 --out releases"
        switch world {
        case .empty:
            break
        case .keyFolder:
            try await run("mkdir keys")
        case .publish:
            try await run("mkdir keys; cp -R '\(sample)' build; KEYS=keys/release; \(keys)")
        case .channel(let rollout):
            try await run(
                """
                cp -R '\(sample)' build; KEYS=k; \(keys)
                \(publish) --version 1.4.0 --key k.pem
                \(publish) --version 1.5.0 --key k.pem \(rollout == nil ? "" : "--rollout 0:5,1d:25,2d:100")
                \(rollout == "paused" ? "clientctl rollout pause stable --out releases --key k.pem" : "")
                """)
        case .cohort:
            try await run(
                """
                cp -R '\(sample)' build; KEYS=k; \(keys)
                \(publish) --version 1.4.0 --key k.pem
                \(publish) --version 1.5.0 --key k.pem
                printf '%s\\n' 0123456789abcdef0123456789abcdef fedcba9876543210fedcba9876543210 > pilot-ids.txt
                """)
        case .media:
            try await run(
                """
                cp -R '\(sample)' build; KEYS=release; \(keys)
                \(publish) --version 1.4.0 --key release.pem
                \(publish) --version 1.5.0 --key release.pem
                """)
        case .roots(let draft):
            try await run(
                """
                KEYS='a b r1 r2 r3'; \(keys)
                clientctl root init one.json --app com.example.notes --channel stable --root-key a.pub.pem --root-key b.pub.pem \
                  --root-threshold 2 --release-key r1.pub.pem --release-key r2.pub.pem --release-threshold 2 --expires 365d
                clientctl root sign one.json --key a.pem --key b.pem
                mkdir -p releases/stable/root; mv one.json releases/stable/root/1.json
                \(draft ? "clientctl root init root-2.json --from releases/stable/root/1.json --expires 365d" : "")
                """)
        case .pending:
            try await run(
                """
                cp -R '\(sample)' build; KEYS='a r1 r2 r3'; \(keys)
                clientctl root init one.json --app com.example.notes --channel stable --root-key a.pub.pem \
                  --release-key r1.pub.pem --release-key r2.pub.pem --release-key r3.pub.pem --release-threshold 3 --expires 365d
                clientctl root sign one.json --key a.pem
                mkdir -p releases/stable/root; mv one.json releases/stable/root/1.json
                \(publish) --version 1.5.0 --key r1.pem
                test -f releases/stable/pending/v1.5.0.json
                """)
        case .rolloutRole:
            try await run(
                """
                cp -R '\(sample)' build; KEYS='a k rollout'; \(keys)
                clientctl root init one.json --app com.example.notes --channel stable --root-key a.pub.pem \
                  --release-key k.pub.pem --rollout-key rollout.pub.pem --expires 365d
                clientctl root sign one.json --key a.pem
                mkdir -p releases/stable/root; mv one.json releases/stable/root/1.json
                \(publish) --version 1.4.0 --key k.pem
                \(publish) --version 1.5.0 --key k.pem
                """)
        }
        return folder
    }
}

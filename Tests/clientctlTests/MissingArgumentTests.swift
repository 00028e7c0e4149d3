import Foundation
import StrictJSON
import TestSupport
import Testing

/// Every command refuses a command line that lacks a required option or argument: exit 64,
/// the missing one named on stderr, nothing written. `--version` is an option of `publish`
/// and `ack`, never the tool's version, which only `clientctl --version` prints.
@Suite struct MissingArgumentTests {
    /// A value that parses for an argument of this placeholder, so that only the omitted
    /// argument is wrong.
    static func sample(for valueName: String?) -> String {
        switch valueName {
        case "SEMVER", "VERSION": "1.0.0"
        case "N", "K", "SECONDS", "PERCENT": "1"
        case "RFC3339|Nd": "30d"
        case "RFC3339": "2030-01-01T00:00:00Z"
        case "ROLE": "release"
        default: "x"
        }
    }

    /// The command line of `node` with every required argument but `omitted` (and, for a
    /// positional, the positionals after it, which would otherwise move into its place).
    static func arguments(_ node: CommandTree.Node, omitting omitted: Int) -> [String] {
        var out = node.path
        var positionalOmitted = false
        for (k, argument) in node.arguments.enumerated() where !argument.isOptional && argument.kind != "flag" {
            if argument.kind == "positional" {
                positionalOmitted = positionalOmitted || k == omitted
                if !positionalOmitted { out.append(sample(for: argument.valueName)) }
            } else if k != omitted {
                out += [argument.label, sample(for: argument.valueName)]
            }
        }
        return out
    }

    @Test func everyCommandNamesAMissingRequiredArgumentAndExits64() async throws {
        let tree = try await CommandTree.load()
        let leaves = tree.nodes.filter(\.isLeaf)
        #expect(leaves.count >= 25, "\(leaves.map(\.description))")
        let tmp = try TemporaryDirectory("missing")
        // No device root from the environment: `--root` is then required too.
        let environment = ["CLIENTCTL_ROOT": ""]
        var checked = 0
        for node in leaves {
            let required = node.arguments.enumerated().filter { !$0.element.isOptional && $0.element.kind != "flag" }
            for (k, argument) in required {
                let line = Self.arguments(node, omitting: k)
                let result = try await ClientctlBinary.run(line, environment: environment, directory: tmp.path)
                #expect(result.status == 64, "\(line) without \(argument.label): exit \(result.status), \(result.output)\(result.errorOutput)")
                #expect(result.errorOutput.contains(argument.label), "\(line): \(result.errorOutput)")
                checked += 1
            }
            // With nothing at all, even a command whose options are all optional to the
            // parser (`--root` may come from CLIENTCTL_ROOT) names what it misses.
            let bare = try await ClientctlBinary.run(node.path, environment: environment, directory: tmp.path)
            #expect(bare.status == 64, "\(node) alone: exit \(bare.status), \(bare.output)\(bare.errorOutput)")
            let labels = node.arguments.filter { $0.kind != "flag" }.map(\.label)
            #expect(labels.contains { bare.errorOutput.contains($0) }, "\(node) alone: \(bare.errorOutput)")
            checked += 1
        }
        #expect(checked > leaves.count, "some command has a required argument")
        let written = try FileManager.default.contentsOfDirectory(atPath: tmp.path)
        #expect(written.isEmpty, "a refused command line wrote \(written)")
    }

    /// The report of issue 21: without `--min-shell`, publish printed the tool's version and
    /// exited 0 because of `--version 1.0.0`.
    @Test func publishWithoutMinShellIsRefusedNotAVersionRequest() async throws {
        let tmp = try TemporaryDirectory("missing-min-shell")
        let line = [
            "publish", ClientctlBinary.packagePath("Fixtures/sample-client"), "--app", "a.b", "--channel", "stable",
            "--version", "1.0.0", "--key", ClientctlBinary.packagePath("Keys/test-signing.pem"), "--out", tmp("rel"),
        ]
        let result = try await ClientctlBinary.run(line)
        #expect(result.status == 64)
        #expect(result.output.isEmpty)
        #expect(result.errorOutput.hasPrefix("Error: Missing expected argument '--min-shell <SEMVER>'"), "\(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: tmp("rel")))

        let ack = try await ClientctlBinary.run(["ack", "--version"], environment: ["CLIENTCTL_ROOT": ""])
        #expect(ack.status == 64 && ack.output.isEmpty, "\(ack.output)\(ack.errorOutput)")
        #expect(ack.errorOutput.contains("--version"), "\(ack.errorOutput)")
    }

    @Test func onlyTheTopLevelVersionFlagPrintsTheVersion() async throws {
        let version = try await ClientctlBinary.run(["--version"])
        #expect(version.status == 0)
        #expect(version.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3, "\(version.output)")
        let help = try await ClientctlBinary.run(["--help"], environment: ["COLUMNS": "80"])
        #expect(help.output.contains("clientctl --version"), "the usage names it")
        for line in [["status", "--version"], ["--version", "status"]] {
            let result = try await ClientctlBinary.run(line, environment: ["CLIENTCTL_ROOT": ""])
            #expect(result.status == 64 && result.output.isEmpty, "\(line): \(result.status) \(result.output)")
        }
    }
}

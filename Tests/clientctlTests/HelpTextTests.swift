import Foundation
import TestSupport
import Testing

/// Help renders cleanly at 80 columns (argument-parser's width when not on a terminal):
/// every line of a command's examples is indented, so none was wrapped or left as a
/// stray `\`.
@Suite struct HelpTextTests {
    @Test(arguments: [
        ["keygen"], ["publish"], ["verify"], ["manifest", "canonical"], ["init"], ["install"],
        ["status"], ["list"], ["ack"], ["gc"], ["reload"], ["rollback"], ["serve"], ["rollout"], ["rollout", "set"],
        ["rollout", "pause"], ["rollout", "resume"], ["rollout", "complete"], ["revoke"], ["push"],
    ])
    func examplesFitIn80Columns(command: [String]) async throws {
        let result = try await ClientctlBinary.run(command + ["--help"], environment: ["COLUMNS": "80"])
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Examples:") }, "\(command): no examples")
        let examples = lines[(start + 1)...].prefix { !$0.isEmpty }
        #expect(!examples.isEmpty)
        for line in examples {
            #expect(line.hasPrefix("  "), "\(command): wrapped example line \(line.debugDescription)")
            #expect(line.count <= 80, "\(command): \(line.count) columns")
        }
    }

    /// The lines of `text` that are one or two words left over from the line before: the
    /// line before was wrapped (this line's first word did not fit on it), and the paragraph
    /// goes on at the same indentation on the next line, as it does when a line was
    /// pre-wrapped wider than argument-parser's width. A paragraph's own last line (before
    /// an empty line, or a line indented differently: the next option) is no orphan.
    static func orphans(in text: String, width: Int = 80) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func indent(_ line: String) -> Int { line.prefix { $0 == " " }.count }
        var found: [String] = []
        for k in lines.indices.dropFirst().dropLast() {
            let line = lines[k]
            let words = line.split(separator: " ")
            guard (1...2).contains(words.count), let first = words.first else { continue }
            let wrapped = !lines[k - 1].isEmpty && lines[k - 1].count + 1 + first.count > width
            let continues = !lines[k + 1].isEmpty && indent(lines[k + 1]) == indent(line)
            if wrapped && continues { found.append("\(lines[k - 1])\n\(line)\n\(lines[k + 1])") }
        }
        return found
    }

    @Test func theOrphanRuleFindsPreWrappedText() {
        let prewrapped = String(repeating: "word ", count: 14) + "(public\nkey,\nand then the text goes on.\n"
        #expect(Self.orphans(in: prewrapped).count == 1)
        let paragraphEnd = String(repeating: "word ", count: 14) + "(public\nkey.\n\nNext paragraph.\n"
        #expect(Self.orphans(in: paragraphEnd).isEmpty)
        let option =
            "  --wait <SECONDS>        " + String(repeating: "word ", count: 10) + "\n" + String(repeating: " ", count: 26)
            + "more.\n  --json                  JSON.\n"
        #expect(Self.orphans(in: option).isEmpty)
    }

    /// Every command's help (taken from the command tree, so new commands are covered) at
    /// 80 columns: no orphaned words, no line wider than 80 but argument-parser's one-line
    /// USAGE, each option with a placeholder of its own (not the generated `<wait>`) and its
    /// default said once; the overview names every command.
    @Test func everyCommandsHelpWrapsCleanlyAt80Columns() async throws {
        let tree = try await CommandTree.load()
        let nodes = tree.nodes
        #expect(nodes.count >= 30, "\(nodes.map(\.description))")
        for node in nodes {
            let result = try await ClientctlBinary.run(node.path + ["--help"], environment: ["COLUMNS": "80"])
            #expect(result.status == 0, "\(node): \(result.errorOutput)")
            let help = result.output
            #expect(Self.orphans(in: help).isEmpty, "\(node): orphaned words:\n\(Self.orphans(in: help).joined(separator: "\n--\n"))")
            for line in help.split(separator: "\n") where line.count > 80 && !line.hasPrefix("USAGE: ") {
                Issue.record("\(node): \(line.count) columns: \(line)")
            }
            for argument in node.arguments where argument.kind == "option" {
                let placeholder = argument.valueName ?? ""
                #expect(
                    !placeholder.isEmpty && !argument.longNames.contains(placeholder),
                    "\(node) \(argument.label): placeholder <\(placeholder)> is the generated one")
                if argument.defaultValue != nil {
                    #expect(
                        !(argument.abstract ?? "").lowercased().contains("default"),
                        "\(node) \(argument.label): default said twice: \(argument.abstract ?? "") (default: \(argument.defaultValue ?? ""))")
                }
            }
            for sub in node.command.subcommands ?? [] where sub.commandName != "help" {
                #expect(help.contains("\n  \(sub.commandName) "), "\(node) --help does not list \(sub.commandName)")
            }
        }
    }
}

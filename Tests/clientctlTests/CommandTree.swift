import Foundation
import TestSupport

/// The built `clientctl`'s command tree as argument-parser describes it
/// (`clientctl --experimental-dump-help`), so tests cover every command there is,
/// including ones added after the test was written.
struct CommandTree: Decodable {
    struct Name: Decodable {
        var kind: String
        var name: String
    }

    struct Argument: Decodable {
        /// `positional`, `option` or `flag`.
        var kind: String
        var names: [Name]?
        var valueName: String?
        var isOptional: Bool
        var abstract: String?
        var defaultValue: String?
        var shouldDisplay: Bool

        var longNames: [String] { (names ?? []).filter { $0.kind == "long" }.map(\.name) }

        /// How an error message names it: `--min-shell`, or `<DIR>` for a positional.
        var label: String {
            if kind == "positional" { return "<\(valueName ?? "")>" }
            return longNames.first.map { "--" + $0 } ?? "-" + (names?.first?.name ?? "")
        }
    }

    struct Command: Decodable {
        var commandName: String
        var subcommands: [Command]?
        var arguments: [Argument]?
    }

    /// A command with the words that run it (`["rollout", "set"]`; `[]` for the root).
    struct Node: CustomStringConvertible {
        var path: [String]
        var command: Command
        var isLeaf: Bool { (command.subcommands ?? []).isEmpty }
        var arguments: [Argument] { (command.arguments ?? []).filter(\.shouldDisplay) }
        var description: String { (["clientctl"] + path).joined(separator: " ") }
    }

    var command: Command

    /// Reads the tree from the built binary.
    static func load() async throws -> CommandTree {
        let result = try await ClientctlBinary.run(["--experimental-dump-help"])
        guard result.status == 0 else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "dump-help exit \(result.status): \(result.errorOutput)"])
        }
        return try JSONDecoder().decode(CommandTree.self, from: result.stdout)
    }

    /// Every command, the root first, without argument-parser's own `help`.
    var nodes: [Node] {
        var out: [Node] = []
        func walk(_ command: Command, _ path: [String]) {
            out.append(Node(path: path, command: command))
            for sub in command.subcommands ?? [] where sub.commandName != "help" {
                walk(sub, path + [sub.commandName])
            }
        }
        walk(command, [])
        return out
    }
}

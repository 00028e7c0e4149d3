import Foundation
import TestSupport
import Testing

/// The completion scripts argument-parser generates work in a real bash: sourcing the
/// script and asking for completions gives the subcommands and a command's options.
@Suite struct ShellCompletionTests {
    func complete(_ words: [String]) async throws -> [String] {
        let line = words.joined(separator: " ")
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let script = """
            source <('\(ClientctlBinary.path)' --generate-completion-script bash)
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); COMP_LINE='\(line)'; COMP_POINT=\(line.utf8.count)
            _clientctl clientctl '\(words[words.count - 1])' '\(words[words.count - 2])'
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try await Subprocess.run("bash", ["-c", script])
        #expect(result.status == 0, "\(result.errorOutput)")
        return result.output.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesSubcommandsAndOptions() async throws {
        #expect(try await complete(["clientctl", "pub"]) == ["publish"])
        #expect(Set(try await complete(["clientctl", "pu"])) == ["publish", "push"])
        #expect(try await complete(["clientctl", "push", "--max"]) == ["--max-age"])
        #expect(try await complete(["clientctl", "publish", "--for"]) == ["--format"])
        let device = try await complete(["clientctl", "re"])
        #expect(Set(device) == ["reload", "revoke", "repo"], "\(device)")
        #expect(try await complete(["clientctl", "rollout", "pa"]) == ["pause"])
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func everyShellScriptNamesEveryCommand(shell: String) async throws {
        let result = try await ClientctlBinary.run(["--generate-completion-script", shell])
        #expect(result.status == 0)
        for command in ["keygen", "publish", "verify", "manifest", "init", "install", "status", "list", "ack", "gc", "reload", "rollback", "serve"] {
            #expect(result.output.contains(command), "\(shell): \(command)")
        }
    }
}

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
}

import Foundation
import TestSupport
import Testing

/// `clientctl collect`'s refusals at start: distinct exit statuses, one line naming why.
@Suite struct CollectCommandTests {
    func collect(_ arguments: [String]) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(["collect"] + arguments)
    }

    @Test func badStartsExitWithDistinctStatuses() async throws {
        let dir = try TemporaryDirectory("collect")
        let token = dir("token")
        _ = FileManager.default.createFile(atPath: token, contents: Data("abcdefghijklmnopqrstuvwxyz\n".utf8), attributes: [.posixPermissions: 0o600])
        let open = dir("open-token")
        _ = FileManager.default.createFile(atPath: open, contents: Data("abcdefghijklmnopqrstuvwxyz\n".utf8), attributes: [.posixPermissions: 0o644])
        let db = "sqlite:" + dir("reports.db")
        let cases: [([String], Int32, String)] = [
            (["--listen", "nowhere", "--database", db, "--read-token-file", token], 64, "--listen"),
            (["--listen", "127.0.0.1:0", "--database", "mysql://x", "--read-token-file", token], 64, "neither sqlite"),
            (["--listen", "127.0.0.1:0", "--database", db, "--read-token-file", token, "--retention-days", "0"], 64, "--retention-days"),
            (["--listen", "127.0.0.1:0", "--database", db, "--read-token-file", dir("missing")], 66, "missing"),
            (["--listen", "127.0.0.1:0", "--database", db, "--read-token-file", open], 78, "chmod 600"),
            (["--listen", "127.0.0.1:0", "--database", "sqlite:" + dir("no/such/dir/reports.db"), "--read-token-file", token], 73, "cannot open"),
        ]
        for (arguments, status, why) in cases {
            let result = try await collect(arguments)
            #expect(result.status == status, "\(arguments): \(result.errorOutput)")
            #expect(result.errorOutput.contains(why), "\(arguments): \(result.errorOutput)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir("reports.db")))
    }

    @Test func theHelpHasExamples() async throws {
        let help = try await collect(["--help"])
        #expect(help.output.contains("Examples:"))
        #expect(help.output.contains("--read-token-file"))
    }
}

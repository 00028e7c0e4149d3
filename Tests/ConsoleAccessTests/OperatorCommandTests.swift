import ClientFoundation
import Foundation
import TestSupport
import Testing

@testable import ConsoleAccess

/// `clientctl operator add/remove/list`, run as a user runs them: the real binary on files
/// in a temporary folder. Refusals are one line on stderr, a distinct exit status, and the
/// operators file exactly as it was.
@Suite struct OperatorCommandTests {
    static func run(_ arguments: [String], input: Data? = nil) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(["operator"] + arguments, input: input)
    }

    static func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func addListRemoveThroughTheBinary() async throws {
        let tmp = try TemporaryDirectory("operator-cli")
        let file = tmp("operators.json")
        try Self.write("alice's long password\n", to: tmp("alice.pw"))
        try Self.write("bob-password", to: tmp("bob.pw"))  // no newline at all: also one line

        let added = try await Self.run(["add", "alice", "--role", "operator", "--operators", file, "--password-file", tmp("alice.pw")])
        #expect(added.status == 0 && added.output == "added operator alice (operator) in \(file)\n", "\(added.errorOutput)")
        let bob = try await Self.run(["add", "bob", "--role", "viewer", "--operators", file, "--password-file", tmp("bob.pw")])
        #expect(bob.status == 0, "\(bob.errorOutput)")

        // The file: mode 0600, the hashes verify the passwords without their newline.
        var st = stat()
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let operators = try OperatorFile.load(file)
        #expect(operators.authenticate(name: "alice", password: Array("alice's long password".utf8))?.role == .operator)
        #expect(operators.authenticate(name: "alice", password: Array("alice's long password\n".utf8)) == nil)
        #expect(operators.authenticate(name: "bob", password: Array("bob-password".utf8))?.role == .viewer)
        #expect(operators.account(named: "alice")?.passwordHash.hasPrefix("$scrypt$ln=15,r=8,p=1$") == true)

        // list: names and roles, never a hash or a password; --json the same.
        let listed = try await Self.run(["list", "--operators", file])
        #expect(listed.status == 0 && listed.output == "alice\toperator\nbob\tviewer\n", "\(listed.output)\(listed.errorOutput)")
        let json = try await Self.run(["list", "--operators", file, "--json"])
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        let list = object?["operators"] as? [[String: String]]
        #expect(list == [["name": "alice", "role": "operator"], ["name": "bob", "role": "viewer"]], "\(json.output)")
        for output in [added, bob, listed, json] {
            let all = output.output + output.errorOutput
            #expect(!all.contains("alice's long password") && !all.contains("bob-password") && !all.contains("$scrypt$"), "\(all)")
        }

        // A name taken is refused (73) and nothing changes; --replace changes password and role.
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        let taken = try await Self.run(["add", "alice", "--role", "viewer", "--operators", file, "--password-file", tmp("bob.pw")])
        #expect(taken.status == 73 && taken.errorOutput.contains("exists already") && taken.errorOutput.contains("--replace"), "\(taken.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        let replaced = try await Self.run(
            ["add", "alice", "--role", "viewer", "--operators", file, "--password-file", "-", "--replace"], input: Data("new pass\n".utf8))
        #expect(replaced.status == 0 && replaced.output.hasPrefix("replaced operator alice (viewer)"), "\(replaced.errorOutput)")
        let changed = try OperatorFile.load(file)
        #expect(changed.authenticate(name: "alice", password: Array("new pass".utf8))?.role == .viewer)
        #expect(changed.authenticate(name: "alice", password: Array("alice's long password".utf8)) == nil)

        // remove, and a second remove of the same name: 66, nothing changed.
        let removed = try await Self.run(["remove", "bob", "--operators", file])
        #expect(removed.status == 0 && removed.output == "removed operator bob (viewer) from \(file)\n", "\(removed.errorOutput)")
        #expect(try await Self.run(["list", "--operators", file]).output == "alice\tviewer\n")
        let afterRemove = try Data(contentsOf: URL(fileURLWithPath: file))
        let again = try await Self.run(["remove", "bob", "--operators", file])
        #expect(again.status == 66 && again.errorOutput == "clientctl: no operator 'bob' in the operators file\n", "\(again.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == afterRemove)
    }

    /// Each refusal: one line naming what and why, its own status, and no file written.
    @Test func badInputIsRefusedWithOneLineAndChangesNothing() async throws {
        let tmp = try TemporaryDirectory("operator-cli")
        let file = tmp("operators.json")
        try Self.write("good password\n", to: tmp("good.pw"))
        try Self.write("", to: tmp("empty.pw"))
        try Self.write("\n", to: tmp("newline.pw"))
        try Self.write("first line\nsecond line\n", to: tmp("two.pw"))
        try Self.write("first\r\nsecond", to: tmp("crlf.pw"))
        try Self.write(String(repeating: "x", count: 5000), to: tmp("long.pw"))
        try FileManager.default.createDirectory(atPath: tmp("folder.pw"), withIntermediateDirectories: false)
        let add = { (name: String, role: String, password: String) in
            try await Self.run(["add", name, "--role", role, "--operators", file, "--password-file", password])
        }
        let cases: [(Subprocess.Result, Int32, String)] = [
            (try await add("al ice", "operator", tmp("good.pw")), 64, "operator name 'al ice' is not 1 to 64 characters"),
            (try await add("<b>", "operator", tmp("good.pw")), 64, "A-Z, a-z, 0-9, '.', '_' and '-'"),
            (try await add(String(repeating: "a", count: 65), "operator", tmp("good.pw")), 64, "is not 1 to 64 characters"),
            (try await add("alice", "admin", tmp("good.pw")), 64, "unknown role 'admin': a role is viewer or operator"),
            (try await add("alice", "Operator", tmp("good.pw")), 64, "unknown role 'Operator'"),
            (try await add("alice", "operator", tmp("missing.pw")), 66, "password file \(tmp("missing.pw")) does not exist"),
            (try await add("alice", "operator", tmp("empty.pw")), 65, "is empty"),
            (try await add("alice", "operator", tmp("newline.pw")), 65, "is empty"),
            (try await add("alice", "operator", tmp("two.pw")), 65, "holds more than one line"),
            (try await add("alice", "operator", tmp("crlf.pw")), 65, "holds more than one line"),
            (try await add("alice", "operator", tmp("long.pw")), 65, "cap"),
            (try await add("alice", "operator", tmp("folder.pw")), 73, "not a regular file"),
        ]
        for (result, status, words) in cases {
            #expect(result.status == status, "\(result.errorOutput)")
            #expect(result.errorOutput.hasPrefix("clientctl: ") && result.errorOutput.contains(words), "\(result.errorOutput)")
            #expect(result.errorOutput.filter { $0 == "\n" }.count == 1, "one line: \(result.errorOutput)")
            #expect(!result.errorOutput.contains("first line") && !result.errorOutput.contains("second"), "no password in messages")
            #expect(result.output.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: file), "no refusal made the file")
        #expect(!FileManager.default.fileExists(atPath: file + ".lock"), "nor its lock")

        // The file's own refusals: list and remove of a missing file, a file that is not one.
        let missingList = try await Self.run(["list", "--operators", file])
        #expect(missingList.status == 66 && missingList.errorOutput.contains("does not exist: make it with clientctl operator add"))
        let missingRemove = try await Self.run(["remove", "alice", "--operators", file])
        #expect(missingRemove.status == 66 && !FileManager.default.fileExists(atPath: file))
        let badRemove = try await Self.run(["remove", "../alice", "--operators", file])
        #expect(badRemove.status == 64 && badRemove.errorOutput.contains("operator name '../alice'"), "\(badRemove.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: file + ".lock"), "no refusal made the lock")
        try Self.write("{\"version\":1,\"operators\":[{\"name\":\"a\",\"role\":\"viewer\",\"password\":\"plain\"}]}", to: file)
        let broken = try await Self.run(["list", "--operators", file])
        #expect(broken.status == 65 && broken.errorOutput.contains("not a $scrypt$ hash"), "\(broken.errorOutput)")
        let brokenAdd = try await add("bob", "viewer", tmp("good.pw"))
        #expect(brokenAdd.status == 65, "a broken file is not overwritten: \(brokenAdd.errorOutput)")
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains("plain"))
        // A file in a folder that does not exist: 73, saying why.
        let noFolder = try await Self.run(["add", "bob", "--role", "viewer", "--operators", tmp("none/ops.json"), "--password-file", tmp("good.pw")])
        #expect(noFolder.status == 73 && noFolder.errorOutput.contains("No such file or directory"), "\(noFolder.errorOutput)")
        // A missing --role or --password-file is the parser's usage error.
        let noRole = try await Self.run(["add", "alice", "--operators", file, "--password-file", tmp("good.pw")])
        #expect(noRole.status == 64 && noRole.errorOutput.contains("--role"), "\(noRole.errorOutput)")
    }

    /// Several `operator add` processes at once on one file: the lock makes each read the
    /// others' changes, so none is lost.
    @Test func concurrentAddsLoseNothing() async throws {
        let tmp = try TemporaryDirectory("operator-cli")
        let file = tmp("operators.json")
        try Self.write("a password\n", to: tmp("pw"))
        let names = (1...10).map { "op\($0)" }
        let statuses = try await withThrowingTaskGroup(of: Int32.self) { group in
            for name in names {
                group.addTask {
                    try await Self.run(["add", name, "--role", "viewer", "--operators", file, "--password-file", tmp("pw")]).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 0, count: names.count))
        let listed = try await Self.run(["list", "--operators", file])
        #expect(listed.output == names.sorted().map { "\($0)\tviewer\n" }.joined(), "\(listed.output)")
    }
}

import ClientFoundation
import Foundation
import TestSupport
import Testing

@testable import ConsoleAccess

/// The operators file read and changed in-process: strict reading, atomic 0600 writes, a
/// change made under its lock, and logins that take as long for an unknown name.
@Suite struct OperatorFileTests {
    static func account(_ name: String, _ role: OperatorRole = .operator, password: String = "pass-\(UUID())") throws(ConsoleAccessError)
        -> OperatorAccount
    {
        try OperatorAccount(
            name: name, role: role, passwordHash: PasswordHash.make(Array(password.utf8), cost: PasswordHashTests.cheap))
    }

    @Test func addListRemoveRoundTripThroughTheFile() throws {
        let tmp = try TemporaryDirectory("operators")
        let path = tmp("operators.json")
        #expect(throws: ConsoleAccessError.self) { try OperatorFile.load(path) }
        let alice = try Self.account("alice", password: "alice's secret")
        try OperatorFile.update(path) { file in
            try file.add(Self.account("bob", .viewer))
            try file.add(alice)
        }
        let loaded = try OperatorFile.load(path)
        #expect(loaded.accounts.map(\.name) == ["alice", "bob"])
        #expect(loaded.account(named: "bob")?.role == .viewer)
        #expect(loaded.account(named: "Alice") == nil, "names are compared exactly")
        #expect(loaded.authenticate(name: "alice", password: Array("alice's secret".utf8))?.role == .operator)
        #expect(loaded.authenticate(name: "alice", password: Array("wrong".utf8)) == nil)
        #expect(loaded.authenticate(name: "nobody", password: Array("alice's secret".utf8)) == nil)

        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600, "mode \(String(st.st_mode & 0o777, radix: 8))")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("\"version\": 1") && text.contains("\"role\": \"viewer\""), "\(text)")

        // An existing name is refused unless replacing, and the file stays as it was.
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: ConsoleAccessError.self) { try OperatorFile.update(path) { try $0.add(Self.account("alice", .viewer)) } }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        try OperatorFile.update(path) { try $0.add(Self.account("alice", .viewer, password: "new"), replacing: true) }
        let replaced = try OperatorFile.load(path)
        #expect(replaced.account(named: "alice")?.role == .viewer)
        #expect(replaced.authenticate(name: "alice", password: Array("new".utf8)) != nil)
        #expect(replaced.authenticate(name: "alice", password: Array("alice's secret".utf8)) == nil)

        try OperatorFile.update(path) { try $0.remove(named: "bob") }
        #expect(try OperatorFile.load(path).accounts.map(\.name) == ["alice"])
        let missing = #expect(throws: ConsoleAccessError.self) { try OperatorFile.update(path) { try $0.remove(named: "bob") } }
        #expect(missing?.code == .notFound)
    }

    @Test func namesAreOneTo64SafeCharacters() {
        for name in ["a", "alice", "a.b_c-d", "A9", String(repeating: "x", count: 64)] {
            #expect(OperatorAccount.isValid(name: name), "\(name)")
        }
        for name in ["", String(repeating: "x", count: 65), "al ice", "alice\n", "a/b", "<script>", "é", "a:b", "a\u{0}"] {
            #expect(!OperatorAccount.isValid(name: name), "\(name)")
            let error = #expect(throws: ConsoleAccessError.self) { try OperatorAccount.validate(name: name) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("A-Z, a-z, 0-9, '.', '_' and '-'") == true)
            #expect(error?.message.contains("\n") == false, "one line")
        }
    }

    /// What the reader refuses, each with a message naming what is wrong.
    @Test func aFileThatIsNotAnOperatorsFileIsRefused() throws {
        let hash = try PasswordHash.make(Array("pw".utf8), cost: PasswordHashTests.cheap)
        let cases: [(String, String)] = [
            ("", "invalid JSON"),
            ("[]", "expected an object"),
            ("{\"version\":1,\"operators\":[],\"version\":1}", "duplicate key"),
            ("{\"version\":2,\"operators\":[]}", "\"version\" must be 1"),
            ("{\"version\":1}", "\"operators\" must be an array"),
            ("{\"version\":1,\"operators\":[],\"extra\":true}", "unknown field 'extra'"),
            ("{\"version\":1,\"operators\":[7]}", "operator 1 is not an object"),
            ("{\"version\":1,\"operators\":[{\"name\":\"a b\",\"role\":\"viewer\",\"password\":\"\(hash)\"}]}", "operator 1's name"),
            ("{\"version\":1,\"operators\":[{\"name\":\"ab\",\"role\":\"admin\",\"password\":\"\(hash)\"}]}", "role is not viewer or operator"),
            ("{\"version\":1,\"operators\":[{\"name\":\"ab\",\"role\":\"viewer\",\"password\":\"hunter2\"}]}", "not a $scrypt$ hash"),
            (
                "{\"version\":1,\"operators\":[{\"name\":\"ab\",\"role\":\"viewer\",\"password\":\"$scrypt$ln=30,r=8,p=1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA\"}]}",
                "not a $scrypt$ hash"
            ),
            ("{\"version\":1,\"operators\":[{\"name\":\"ab\",\"role\":\"viewer\",\"password\":\"\(hash)\",\"x\":1}]}", "unknown field 'x'"),
            (
                "{\"version\":1,\"operators\":[{\"name\":\"ab\",\"role\":\"viewer\",\"password\":\"\(hash)\"},{\"name\":\"ab\",\"role\":\"operator\",\"password\":\"\(hash)\"}]}",
                "listed twice"
            ),
        ]
        for (text, why) in cases {
            let error = #expect(throws: ConsoleAccessError.self) { try OperatorFile.parse(Array(text.utf8), source: "ops.json") }
            #expect(error?.code == .rejected, "\(text)")
            #expect(error?.message.contains(why) == true, "\(text): \(error?.message ?? "")")
            #expect(error?.message.contains("\n") == false)
        }
    }

    /// A file too large is refused before it is read whole; a folder in its place too.
    @Test func aHugeFileOrAFolderIsRefused() throws {
        let tmp = try TemporaryDirectory("operators")
        let path = tmp("operators.json")
        try Data(count: OperatorFile.maxBytes + 1).write(to: URL(fileURLWithPath: path))
        let huge = #expect(throws: ConsoleAccessError.self) { try OperatorFile.load(path) }
        #expect(huge?.code == .rejected && huge?.message.contains("cap") == true, "\(huge?.message ?? "")")
        try FileManager.default.createDirectory(atPath: tmp("folder"), withIntermediateDirectories: false)
        #expect(throws: ConsoleAccessError.self) { try OperatorFile.load(tmp("folder")) }
    }

    /// A change is made under the lock; the change of a body that throws is not written.
    @Test func aChangeIsMadeUnderTheLockAndAFailedOneChangesNothing() throws {
        let tmp = try TemporaryDirectory("operators")
        let path = tmp("operators.json")
        try OperatorFile.update(path) { try $0.add(Self.account("alice")) }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: ConsoleAccessError.self) {
            try OperatorFile.update(path) { file in
                try file.add(Self.account("bob"))
                try file.remove(named: "nobody")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "a failed change writes nothing")
        // While another open file holds the lock, a change is refused as busy (after its
        // wait, zero here) and writes nothing; once it is released the change is made.
        let lock = try #require(try Flock.attempt(path + ".lock", .file))
        let busy = #expect(throws: ConsoleAccessError.self) {
            try OperatorFile.update(path, lockWait: .zero) { try $0.add(Self.account("carol")) }
        }
        #expect(busy?.code == .busy && busy?.kind == .tempFail && busy?.message.contains("locked") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        lock.release()
        try OperatorFile.update(path, lockWait: .zero) { try $0.add(Self.account("carol")) }
        #expect(try OperatorFile.load(path).account(named: "carol") != nil)
    }

    /// A console's view of the file follows what the commands change, and fails closed when
    /// the file becomes broken or goes.
    @Test func aWatchedFileFollowsChangesAndFailsClosed() throws {
        let tmp = try TemporaryDirectory("operators")
        let path = tmp("operators.json")
        #expect(throws: ConsoleAccessError.self) { try WatchedOperatorFile(path: path) }
        try OperatorFile.update(path) { try $0.add(Self.account("alice")) }
        let watched = try WatchedOperatorFile(path: path)
        #expect(try watched.current().accounts.map(\.name) == ["alice"])
        try OperatorFile.update(path) { try $0.add(Self.account("bob", .viewer)) }
        #expect(try watched.current().accounts.map(\.name) == ["alice", "bob"])
        try OperatorFile.update(path) { try $0.remove(named: "alice") }
        #expect(try watched.current().account(named: "alice") == nil)
        try Data("{\"version\":1,\"operators\":[".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: ConsoleAccessError.self) { try watched.current() }
        try FileManager.default.removeItem(atPath: path)
        let gone = #expect(throws: ConsoleAccessError.self) { try watched.current() }
        #expect(gone?.code == .notFound)
    }
}

/// Logins checked off the caller's thread give the same answers, many at once.
@Suite struct AsyncAuthenticationTests {
    @Test func manyLoginsAtOnceGetTheirOwnAnswers() async throws {
        let alice = try OperatorFileTests.account("alice", password: "alice pw")
        let bob = try OperatorFileTests.account("bob", .viewer, password: "bob pw")
        let file = try OperatorFile(accounts: [alice, bob])
        let attempts: [(String, String, String?)] = [
            ("alice", "alice pw", "alice"), ("bob", "bob pw", "bob"), ("alice", "bob pw", nil), ("carol", "alice pw", nil),
            ("bob", "", nil), ("alice", "alice pw", "alice"),
        ]
        let answers = await withTaskGroup(of: (Int, String?).self) { group in
            for (k, attempt) in attempts.enumerated() {
                group.addTask { (k, await file.authenticated(name: attempt.0, password: Array(attempt.1.utf8))?.name) }
            }
            var out = [Int: String?]()
            for await (k, name) in group { out[k] = name }
            return out
        }
        for (k, attempt) in attempts.enumerated() {
            #expect(answers[k] == .some(attempt.2), "\(attempt.0) with \(attempt.1)")
        }
    }
}

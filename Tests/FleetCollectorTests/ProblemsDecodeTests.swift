import FleetReports
import Foundation
import Testing

/// `ProblemSummary.decode`: what a client (the console, `fleet problems`) takes from a
/// collector. A collector's answer round-trips; a hostile one is refused in one line naming
/// the field, whatever it holds.
@Suite struct ProblemsDecodeTests {
    static let valid = ProblemSummary(
        app: "com.example.notes", channel: "stable", generated: Date(timeIntervalSince1970: 1_764_090_000), windowSeconds: 86_400,
        versions: [
            VersionProblems(
                version: "1.1.0",
                problems: [
                    ProblemCount(kind: "page-errors", count: 15, devices: 2, messages: [KeptMessage(message: "<b>TypeError</b>", count: 2)]),
                    ProblemCount(kind: "rolled-back", reason: "timed-out", count: 2, devices: 2),
                ]),
            VersionProblems(version: "1.0.0"),
        ])

    /// The valid answer's JSON object, to be spoiled.
    static func object() throws -> [String: Any] {
        let data = try ProblemSummary.encoder().encode(valid)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func data(_ object: [String: Any]) throws -> Data { try JSONSerialization.data(withJSONObject: object) }

    /// The first version's first problem changed by `change`.
    static func withProblem(_ change: (inout [String: Any]) -> Void) throws -> Data {
        var o = try object()
        var versions = o["versions"] as? [[String: Any]] ?? []
        var problems = versions[0]["problems"] as? [[String: Any]] ?? []
        change(&problems[0])
        versions[0]["problems"] = problems
        o["versions"] = versions
        return try data(o)
    }

    static func refusal(_ data: Data) -> String {
        do {
            _ = try ProblemSummary.decode(data)
            return "accepted"
        } catch let error as FleetReportsError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func aCollectorsAnswerRoundTrips() throws {
        let data = try ProblemSummary.encoder().encode(Self.valid)
        #expect(try ProblemSummary.decode(data) == Self.valid)
        #expect(try ProblemSummary.decoder().decode(ProblemSummary.self, from: data) == Self.valid)
    }

    @Test func aHostileAnswerIsRefusedNamingTheField() throws {
        var unknown = try Self.object()
        unknown["script"] = "<script>"
        var manyVersions = try Self.object()
        manyVersions["versions"] = Array(repeating: ["version": "1.0.0", "problems": []] as [String: Any], count: 21)
        var badTime = try Self.object()
        badTime["generated"] = "yesterday"
        let cases: [(Data, String)] = [
            (try Self.data(unknown), "problems.script: unknown field"),
            (try Self.data(manyVersions), "problems.versions: 21 versions, more than 20"),
            (try Self.data(badTime), "problems.generated: not an RFC 3339 time"),
            (try Self.withProblem { $0["kind"] = "heartbeat" }, "versions[0].problems[0].kind: \"heartbeat\" is not a problem kind"),
            (try Self.withProblem { $0["count"] = -1 }, "versions[0].problems[0].count: -1 is outside"),
            (try Self.withProblem { $0["count"] = 1.5 }, "versions[0].problems[0].count: not an integer"),
            (
                try Self.withProblem { $0["messages"] = [["message": "a\u{1b}[2Jb", "count": 1]] },
                "versions[0].problems[0].messages[0].message: has control characters"
            ),
            (
                try Self.withProblem { $0["messages"] = [["message": String(repeating: "é", count: 31), "count": 1]] },
                "versions[0].problems[0].messages[0].message: 62 bytes, more than 60"
            ),
            (
                try Self.withProblem { $0["messages"] = Array(repeating: ["message": "m", "count": 1] as [String: Any], count: 6) },
                "versions[0].problems[0].messages: 6 messages, more than 5"
            ),
            (
                try Self.withProblem {
                    $0["kind"] = "rolled-back"
                    $0["reason"] = "timed-out"
                },
                "versions[0].problems[0].messages: only page-errors keep messages"
            ),
            (try Self.withProblem { $0["reason"] = "gremlins" }, "versions[0].problems[0].reason: unknown reason \"gremlins\""),
            (try Self.withProblem { $0["extra"] = 1 }, "versions[0].problems[0].extra: unknown field"),
            (Data("[]".utf8), "problems: not a JSON object"),
            (Data("{\"app\":".utf8), ""),
            (Data(repeating: 0x20, count: ProblemSummary.maxBytes + 1), "problems: \(ProblemSummary.maxBytes + 1) bytes, more than"),
        ]
        for (data, message) in cases {
            let refusal = Self.refusal(data)
            #expect(refusal != "accepted" && refusal.hasPrefix(message), "\(message) → \(refusal)")
            #expect(!refusal.contains("\n") && !refusal.contains("\u{1b}"), "one printable line: \(refusal)")
        }
        var many = Self.valid
        many.versions[0].problems = Array(repeating: ProblemCount(kind: "crash-free", count: 1, devices: 1), count: 25)
        #expect(Self.refusal(try ProblemSummary.encoder().encode(many)).hasPrefix("versions[0].problems: 25 kinds, more than 24"))
    }
}

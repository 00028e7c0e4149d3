import Foundation
import TestSupport
import Testing

/// `fleet status` and `fleet devices` against a collector stand-in, printed for terminals of
/// 80, 100 and 200 columns (`COLUMNS`, the terminal itself, or neither: 100): every line
/// fits, the columns kept are the first by priority, one line names those left out, and
/// `--wide` / `-o wide` print every column, `-o json` the JSON as `--json` does.
@Suite struct FleetTableWidthTests {
    static let token = "read-token-0123456789abcdef"

    static let statusByPriority = [
        "VERSION", "NOW", "INSTALLS", "FAILED", "ROLLBACKS", "ERRORS/DEV-H", "ROLLOUT", "TRIALS", "COMMITS", "BLACKLISTS", "WEB DEATHS",
        "STAGED", "MEDIAN ACK", "TO RUNNING (MED/P95)", "DEFERRED", "FROM MIRRORS",
    ]
    static let statusPrinted = [
        "VERSION", "NOW", "INSTALLS", "TRIALS", "COMMITS", "ROLLBACKS", "FAILED", "BLACKLISTS", "WEB DEATHS", "ERRORS/DEV-H", "MEDIAN ACK",
        "STAGED", "TO RUNNING (MED/P95)", "DEFERRED", "FROM MIRRORS", "ROLLOUT",
    ]
    static let devicesByPriority = ["STATUS", "DEVICE", "LAST SEEN", "HELD", "LABELS", "APP/CHANNEL", "KEY", "FIRST SEEN"]
    static let devicesPrinted = ["STATUS", "DEVICE", "KEY", "APP/CHANNEL", "FIRST SEEN", "LAST SEEN", "HELD", "LABELS"]

    static let versions = [
        "3.0.0-rc.2+build.20251125.7f3a", "2.14.1+build.20251120.0a1b2c3d", "2.14.0", "2.13.5-hotfix.1", "2.12.0", "1.9.22-lts",
    ]

    /// Six versions with every figure filled, in the collector's wire form.
    static let summaryJSON: String = {
        let versions = Self.versions.enumerated().map { i, v in
            """
            {"blacklists":{"timed-out":\(20 + i)},"commits":\(1800 + i),"devicesNow":\(1000 + i),"downloadDeferrals":{"metered":4,"window":30},\
            "downloadFailures":{"network":2},"downloadedBytes":50000000,"errors":{"devices":2,"errors":42,"hours":3,\
            "errorsPerDeviceHour":14,"mean":18,"sd":16.97},"errorsPerDeviceHour":14,"failureRate":0.0225,"installs":\(2000 + i),\
            "medianAckMs":2300,"mirrorBytes":45000000,"refusals":{"rollout":11},"rollbacks":{"page-crashed":3,"timed-out":\(40 + i)},\
            "rollout":{"paused":\(i == 0),"percent":25},"staged":120,"stagedToRunningMedianMs":5400000,"stagedToRunningP95Ms":90000000,\
            "trials":\(1900 + i),"version":"\(v)","webProcessDeaths":{"crashed":7}}
            """
        }
        return """
            {"app":"com.example.notes","channel":"stable","devices":12345,"generated":"2026-11-25T12:00:00Z","rollouts":[],\
            "silent":[],"silentDevices":0,"timeline":[],"versions":[\(versions.joined(separator: ","))],"windowSeconds":86400}
            """
    }()

    /// Four devices, labelled, one pending with reports held.
    static let devicesJSON: String = {
        let devices = (1...4).map { n in
            """
            {"app":"com.example.notes","channel":"stable","device":"\(String(format: "%032x", n))","firstSeen":"2026-11-20T08:00:00Z",\
            "held":\(n == 4 ? 1234 : 0),"key":"\(String(format: "%064x", n + 100))","labels":{"ring":"beta","store":"\(n)"},\
            "lastSeen":"2026-11-25T11:5\(n):00Z","status":"\(n == 4 ? "pending" : "accepted")"}
            """
        }
        return """
            {"admission":"open","counts":{"accepted":3,"pending":1,"rejected":0},"devices":[\(devices.joined(separator: ","))]}
            """
    }()

    static func server() throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { request in
            .text(request.path == "/v1/devices" ? Self.devicesJSON : Self.summaryJSON, contentType: "application/json")
        }
    }

    /// `clientctl fleet <command>` against `server` with `extra`, in `environment`; `unset`:
    /// without `COLUMNS` at all.
    static func run(
        _ command: String, _ server: LoopbackHTTPServer, _ dir: TemporaryDirectory, _ extra: [String] = [], environment: [String: String] = [:]
    ) async throws -> Subprocess.Result {
        let token = dir("read.token")
        try Data((Self.token + "\n").utf8).write(to: URL(fileURLWithPath: token))
        var arguments = ["fleet", command, "--collector", server.baseURL.absoluteString + "/", "--token-file", token]
        if command == "status" { arguments += ["--app", "com.example.notes", "--channel", "stable"] }
        let env = environment["COLUMNS"] == nil ? ["-u", "COLUMNS"] : []
        return try await Subprocess.run("/usr/bin/env", env + [ClientctlBinary.path] + arguments + extra, environment: environment)
    }

    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// The headers of the line that starts with `first`.
    static func headers(_ lines: [String], first: String) throws -> [String] {
        let header = try #require(lines.first { $0.hasPrefix(first + " ") })
        return header.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Checks one laid-out table: every line at most `columns`, the first `kept` columns by
    /// priority in the printed order, and the one note naming those left out (or none).
    static func check(
        _ output: String, columns: Int, kept: Int, first: String, byPriority: [String], printed: [String]
    ) throws {
        let lines = Self.lines(output)
        for line in lines { #expect(line.count <= columns, "\(line.count) > \(columns): \(line)") }
        #expect(try headers(lines, first: first) == printed.filter { byPriority.prefix(kept).contains($0) }, "\(output)")
        let notes = lines.filter { $0.contains("left out") }
        let leftOut = byPriority.dropFirst(kept)
        if leftOut.isEmpty {
            #expect(notes.isEmpty, "\(output)")
        } else {
            #expect(notes.count == 1, "\(output)")
            let note = try #require(notes.first)
            #expect(
                note.hasPrefix("(\(leftOut.count) column\(leftOut.count == 1 ? "" : "s") left out for \(columns) columns: \(leftOut.first ?? "")"),
                "\(note)")
            #expect(note.hasSuffix("; --wide shows all)"), "\(note)")
            #expect(!byPriority.prefix(kept).contains { note.contains(": \($0),") || note.contains(" \($0);") }, "\(note)")
        }
    }

    @Test(arguments: [(80, 6), (100, 8), (200, 16)])
    func fleetStatusFitsTheColumnsItIsGiven(columns: Int, kept: Int) async throws {
        let dir = try TemporaryDirectory("fleet-width")
        let server = try Self.server()
        let run = try await Self.run("status", server, dir, environment: ["COLUMNS": "\(columns)"])
        #expect(run.status == 0, "\(run.errorOutput)")
        try Self.check(run.output, columns: columns, kept: kept, first: "VERSION", byPriority: Self.statusByPriority, printed: Self.statusPrinted)
        for version in Self.versions {
            #expect(Self.lines(run.output).filter { $0.hasPrefix(version + " ") }.count == 1, "\(run.output)")
        }
    }

    /// STATUS 8, DEVICE 32, LAST SEEN 20, HELD 4, LABELS 17, APP/CHANNEL 24, KEY 64, FIRST SEEN 20.
    @Test(arguments: [(80, 4), (100, 5), (200, 7)])
    func fleetDevicesFitsTheColumnsItIsGiven(columns: Int, kept: Int) async throws {
        let dir = try TemporaryDirectory("fleet-width")
        let server = try Self.server()
        let run = try await Self.run("devices", server, dir, environment: ["COLUMNS": "\(columns)"])
        #expect(run.status == 0, "\(run.errorOutput)")
        let lines = Self.lines(run.output)
        #expect(lines.first == "admission: open; 3 accepted, 1 pending, 0 rejected", "\(run.output)")
        try Self.check(run.output, columns: columns, kept: kept, first: "STATUS", byPriority: Self.devicesByPriority, printed: Self.devicesPrinted)
        for n in 1...4 {
            let row = try #require(lines.first { $0.contains(String(format: "%032x", n)) }, "\(run.output)")
            #expect(row.hasPrefix(n == 4 ? "pending " : "accepted "), "\(row)")
            #expect(row.contains("2026-11-25T11:5\(n):00Z"), "\(row)")
            if kept >= 5 { #expect(row.hasSuffix("  ring=beta,store=\(n)"), "\(row)") }
        }
    }

    /// Neither `COLUMNS` nor a terminal: 100 columns. A terminal (a pty `script` opens, 94
    /// columns wide) is asked its width; `COLUMNS` wins over it.
    @Test func withoutColumnsTheTerminalOrElse100() async throws {
        let dir = try TemporaryDirectory("fleet-width")
        let server = try Self.server()
        let piped = try await Self.run("status", server, dir)
        #expect(piped.status == 0, "\(piped.errorOutput)")
        try Self.check(piped.output, columns: 100, kept: 8, first: "VERSION", byPriority: Self.statusByPriority, printed: Self.statusPrinted)

        let token = dir("read.token")
        let command =
            [ClientctlBinary.path, "fleet", "status", "--collector", server.baseURL.absoluteString + "/", "--token-file", token]
            .joined(separator: " ") + " --app com.example.notes --channel stable"
        for (columns, environment) in [(94, "env -u COLUMNS"), (200, "env COLUMNS=200")] {
            let script = "stty cols 94 rows 50; \(environment) \(command)"
            let tty = try await Subprocess.run("/usr/bin/script", ["-qec", script, "/dev/null"])
            #expect(tty.status == 0, "\(tty.output) \(tty.errorOutput)")
            let output = tty.output.replacingOccurrences(of: "\r\n", with: "\n")
            try Self.check(
                output, columns: columns, kept: columns == 94 ? 7 : 16, first: "VERSION", byPriority: Self.statusByPriority,
                printed: Self.statusPrinted)
        }
    }

    /// `--wide` and `-o wide` print every column whatever `COLUMNS` says; `-o json` is
    /// `--json`, the collector's JSON as it came; asking for both is a usage error.
    @Test(arguments: ["status", "devices"])
    func wideShowsEveryColumnAndJSONIsAsItCame(command: String) async throws {
        let dir = try TemporaryDirectory("fleet-width")
        let server = try Self.server()
        let (first, printed) = command == "status" ? ("VERSION", Self.statusPrinted) : ("STATUS", Self.devicesPrinted)
        for flags in [["--wide"], ["-o", "wide"], ["--output", "wide"]] {
            let run = try await Self.run(command, server, dir, flags, environment: ["COLUMNS": "80"])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(try Self.headers(Self.lines(run.output), first: first) == printed, "\(run.output)")
            #expect(!run.output.contains("left out"), "\(run.output)")
        }
        let body = command == "status" ? Self.summaryJSON : Self.devicesJSON
        for flags in [["--json"], ["-o", "json"]] {
            let run = try await Self.run(command, server, dir, flags, environment: ["COLUMNS": "80"])
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(run.output == body + "\n")
        }
        for flags in [["--json", "--wide"], ["-o", "json", "--wide"], ["--json", "-o", "wide"]] {
            let run = try await Self.run(command, server, dir, flags)
            #expect(run.status == 64, "\(flags): \(run.output)")
            #expect(run.errorOutput.contains("give one"), "\(run.errorOutput)")
        }
        let bad = try await Self.run(command, server, dir, ["-o", "yaml"])
        #expect(bad.status == 64, "\(bad.errorOutput)")
    }
}

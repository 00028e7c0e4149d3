import DeviceIdentity
import FleetReports
import Foundation
import Testing

@testable import FleetPage

/// `fleet status`'s text laid out to a terminal's width: every line fits, the columns kept
/// are those an operator reads first (a column is left out whole, never cut), one line says
/// which were left out, and `--wide` (`.wide`) prints them all as before.
@Suite struct FleetTextWidthTests {
    /// The columns from the first kept to the first left out, as the docs list them.
    static let byPriority = [
        "VERSION", "NOW", "INSTALLS", "FAILED", "ROLLBACKS", "ERRORS/DEV-H", "ROLLOUT", "TRIALS", "COMMITS", "BLACKLISTS", "WEB DEATHS",
        "STAGED", "MEDIAN ACK", "TO RUNNING (MED/P95)", "DEFERRED", "FROM MIRRORS",
    ]
    /// The columns in the order printed (as `--wide` prints them).
    static let printed = [
        "VERSION", "NOW", "INSTALLS", "TRIALS", "COMMITS", "ROLLBACKS", "FAILED", "BLACKLISTS", "WEB DEATHS", "ERRORS/DEV-H", "MEDIAN ACK",
        "STAGED", "TO RUNNING (MED/P95)", "DEFERRED", "FROM MIRRORS", "ROLLOUT",
    ]
    /// What an operator reads first: in every default table (100 columns).
    static let first = ["VERSION", "NOW", "INSTALLS", "FAILED", "ROLLBACKS", "ERRORS/DEV-H", "ROLLOUT"]

    static let versions = [
        "3.0.0-rc.2+build.20251125.7f3a", "2.14.1+build.20251120.0a1b2c3d", "2.14.0", "2.13.5-hotfix.1", "2.12.0", "1.9.22-lts",
    ]

    /// Six versions with long names and every figure filled, a cohort, reasons and a silent device.
    static func fleet() -> FleetSummary {
        var s = FleetSummary(app: "com.example.notes", channel: "stable", generated: FleetSamples.hour(24), windowSeconds: 86_400)
        s.labels = ["ring": "beta", "store": "berlin-mitte-1234"]
        s.devices = 12_345
        s.silentDevices = 321
        s.silent = [
            SilentDevice(device: DeviceID(String(repeating: "0", count: 31) + "1") ?? .random(), lastSeen: FleetSamples.hour(3), running: versions[0])
        ]
        s.versions = versions.enumerated().map { i, name in
            var v = VersionSummary(version: name)
            v.devicesNow = 1_000 + i
            v.installs = 2_000 + i
            v.trials = 1_900 + i
            v.commits = 1_800 + i
            v.rollbacks = ["timed-out": 40 + i, "page-crashed": 3]
            v.blacklists = ["timed-out": 20 + i]
            v.webProcessDeaths = ["crashed": 7]
            v.downloadFailures = ["network": 2]
            v.refusals = ["rollout": 11]
            v.failureRate = 0.0225
            v.medianAckMs = 2_300
            v.staged = 120
            v.stagedToRunningMedianMs = 5_400_000
            v.stagedToRunningP95Ms = 90_000_000
            v.rollout = RolloutSeen(percent: 25, paused: i == 0)
            v.downloadDeferrals = ["window": 30, "metered": 4]
            v.downloadedBytes = 50_000_000
            v.mirrorBytes = 45_000_000
            let sums: [(errors: Int64, ms: Int64)] = [(errors: 30, ms: 3_600_000), (errors: 12, ms: 7_200_000)]
            v.errors = ErrorFigures(devices: sums)
            return v
        }
        return s
    }

    /// The lines of `text`, without the newline that ends the last.
    static func lines(_ text: String) -> [String] {
        text.hasSuffix("\n") ? text.dropLast().components(separatedBy: "\n") : text.components(separatedBy: "\n")
    }

    /// The headers of the table's header line.
    static func headers(_ lines: [String]) throws -> [String] {
        let header = try #require(lines.first { $0.hasPrefix("VERSION ") })
        return header.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// 80 columns keep the first six, 100 the first eight (the longest version is 30
    /// characters), 200 every column.
    @Test(arguments: [(80, 6), (100, 8), (200, 16)])
    func everyLineFitsAndTheColumnsAreTheFirstByPriority(columns: Int, kept: Int) throws {
        let text = FleetText.render(Self.fleet(), layout: .fit(columns: columns))
        let lines = Self.lines(text)
        for line in lines { #expect(line.count <= columns, "\(line.count) > \(columns): \(line)") }
        let headers = try Self.headers(lines)
        #expect(headers == Self.printed.filter { Self.byPriority.prefix(kept).contains($0) }, "\(text)")
        if columns >= 100 { #expect(Self.first.allSatisfy(headers.contains), "\(text)") }
        // Every version whole, one row each, in the summary's order.
        let rows = lines.filter { line in Self.versions.contains { line.hasPrefix($0 + " ") } }
        #expect(rows.map { row in Self.versions.first { row.hasPrefix($0 + " ") } } == Self.versions, "\(text)")
        // One line names what was left out, the first by priority first.
        let notes = lines.filter { $0.contains("left out") }
        let leftOut = Array(Self.byPriority.dropFirst(kept))
        if leftOut.isEmpty {
            #expect(notes.isEmpty, "\(text)")
        } else {
            #expect(notes.count == 1, "\(text)")
            let note = try #require(notes.first)
            let prefix = "(\(leftOut.count) columns left out for \(columns) columns: "
            #expect(note.hasPrefix(prefix) && note.hasSuffix("; --wide shows all)"), "\(note)")
            let names = note.dropFirst(prefix.count).dropLast("; --wide shows all)".count).components(separatedBy: ", ")
            if let last = names.last, last.hasPrefix("and "), last.hasSuffix(" more") {
                let named = names.dropLast()
                #expect(Array(named) == Array(leftOut.prefix(named.count)), "\(note)")
                #expect(Int(last.dropFirst(4).dropLast(5)) == leftOut.count - named.count, "\(note)")
            } else {
                #expect(names == leftOut, "\(note)")
            }
            // Right under the table.
            let after = try #require(lines.firstIndex { $0.hasPrefix(Self.versions[5] + " ") })
            #expect(lines[after + 1] == note)
        }
    }

    @Test func wideShowsEveryColumnAndWrapsNothing() throws {
        let text = FleetText.render(Self.fleet(), layout: .wide)
        let lines = Self.lines(text)
        #expect(try Self.headers(lines) == Self.printed)
        #expect(!text.contains("left out"))
        #expect(lines.contains { $0.count > TextLayout.defaultColumns }, "a line of every column is wider than the default")
        #expect(FleetText.render(Self.fleet()) == text, "wide is what the text is without a layout")
        #expect(lines[0].hasPrefix("com.example.notes · stable · labels ring=beta,store=berlin-mitte-1234: 12345 devices, 321 silent"))
    }

    /// The sample day at the default width: the figures an operator reads first, under
    /// their headers, and the reasons and silent devices as before.
    @Test func theDefaultTableOfADay() {
        let expected = """
            com.example.notes · stable: 12 devices, 2 silent (window 1 h), as of 2025-11-26 00:00 UTC

            VERSION  NOW  INSTALLS  TRIALS  COMMITS  ROLLBACKS  FAILED  BLACKLISTS  ERRORS/DEV-H  ROLLOUT
            1.2.0      0         5       5        1          4  80.0 %           4         14.00  10 % paused
            1.1.0      4         5       5        4          1  20.0 %           1          0.33  100 %
            1.0.0      6         0       0        0          0       –           0             –  –
            (6 columns left out for 100 columns: WEB DEATHS, STAGED, MEDIAN ACK, and 3 more; --wide shows all)

            By reason (devices):
              1.2.0  rollbacks: timed-out 3, page-crashed 1
              1.2.0  blacklists: timed-out 3, page-crashed 1
              1.2.0  web-process deaths: crashed 1
              1.2.0  download deferrals: window 3, metered 1
              1.1.0  rollbacks: timed-out 1
              1.1.0  blacklists: timed-out 1
              1.1.0  download failures: network 2
              1.1.0  refusals: rollout 7

            Silent devices (2, longest silent first):
              00000000000000000000000000000001  last seen 2025-11-25 03:00 UTC  running 1.0.0
              00000000000000000000000000000002  last seen 2025-11-25 05:30 UTC  running 1.1.0

            """
        #expect(FleetText.render(FleetSamples.day(), layout: .fit(columns: TextLayout.defaultColumns)) == expected)
    }

    /// A long first line wraps between its figures, indented, within the width.
    @Test func aLongFirstLineWrapsBetweenItsFigures() {
        var summary = FleetSamples.day()
        summary.labels = ["store": "berlin-mitte-1234", "ring": "beta"]
        let text = FleetText.render(summary, layout: .fit(columns: 80))
        let lines = Self.lines(text)
        #expect(lines[0] == "com.example.notes · stable · labels ring=beta,store=berlin-mitte-1234:", "\(text)")
        #expect(lines[1] == "    12 devices, 2 silent (window 1 h), as of 2025-11-26 00:00 UTC", "\(text)")
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(text)")
    }

    /// A device's first report, before it ran anything, names `none` as running: those
    /// devices are one line, not a version's row; a silent one ran "no version yet".
    @Test func devicesWithoutAVersionAreALineNotARow() {
        var summary = FleetSamples.day()
        var none = VersionSummary(version: FleetSummary.noVersion)
        none.devicesNow = 3
        summary.versions.append(none)
        summary.silent[0].running = FleetSummary.noVersion
        for layout in [TextLayout.wide, .fit(columns: 80)] {
            let text = FleetText.render(summary, layout: layout)
            let lines = Self.lines(text)
            #expect(!lines.contains { $0.hasPrefix("none ") }, "\(text)")
            #expect(lines.contains("3 devices have not run a version yet."), "\(text)")
            #expect(lines.contains { $0.hasSuffix("running no version yet") }, "\(text)")
            #expect(lines.contains { $0.hasPrefix("1.0.0 ") }, "\(text)")
        }
        none.devicesNow = 1
        var waiting = FleetSamples.empty()
        waiting.devices = 1
        waiting.versions = [none]
        #expect(
            FleetText.render(waiting, layout: .fit(columns: 100))
                == "com.example.notes · beta: 1 device, 0 silent (window 1 d), as of 2025-11-26 00:00 UTC\n\n1 device has not run a version yet.\n")
    }

    /// Narrower than the two first columns: the version is cut in the middle, the line fits.
    @Test func aVersionWiderThanTheTerminalIsCutInTheMiddle() {
        var summary = FleetSamples.day()
        summary.versions[0].version = String(repeating: "9", count: 30) + "-" + String(repeating: "a", count: 33)
        let text = FleetText.render(summary, layout: .fit(columns: 40))
        let lines = Self.lines(text)
        #expect(lines.allSatisfy { $0.count <= 40 }, "\(text)")
        #expect(lines.contains { $0.hasPrefix(String(repeating: "9", count: 17) + "…" + String(repeating: "a", count: 17)) }, "\(text)")
    }
}

import FleetReports
import Foundation
import Testing

@testable import FleetPage

/// The page and the text of `fleet status`, rendered without I/O.
@Suite struct FleetPageTests {
    /// The value of the element naming `field` of `version` (`data-version="…" data-field="…"`).
    static func figure(_ html: String, version: String, field: String, reason: String? = nil) -> String? {
        var attributes = "data-version=\"\(version)\" data-field=\"\(field)\""
        if let reason { attributes += " data-reason=\"\(reason)\"" }
        guard let at = html.range(of: attributes) else { return nil }
        let rest = html[at.upperBound...]
        guard let open = rest.firstIndex(of: ">"), let close = rest[open...].firstIndex(of: "<") else { return nil }
        return String(rest[rest.index(after: open)..<close])
    }

    @Test func everyFigureOfEveryVersionIsInTheDOM() {
        let summary = FleetSamples.day()
        let html = FleetHTML.render(summary)
        for v in summary.versions {
            #expect(Self.figure(html, version: v.version, field: "devicesNow") == "\(v.devicesNow)")
            #expect(Self.figure(html, version: v.version, field: "installs") == "\(v.installs)")
            #expect(Self.figure(html, version: v.version, field: "trials") == "\(v.trials)")
            #expect(Self.figure(html, version: v.version, field: "commits") == "\(v.commits)")
            #expect(Self.figure(html, version: v.version, field: "rollbacks") == "\(v.rollbacks.values.reduce(0, +))")
            for (reason, count) in v.rollbacks {
                #expect(Self.figure(html, version: v.version, field: "rollbacks", reason: reason) == "\(count)")
            }
            for (reason, count) in v.webProcessDeaths {
                #expect(Self.figure(html, version: v.version, field: "webProcessDeaths", reason: reason) == "\(count)")
            }
        }
        #expect(Self.figure(html, version: "1.1.0", field: "failureRate") == "20.0 %")
        #expect(Self.figure(html, version: "1.1.0", field: "medianAckMs") == "840 ms")
        #expect(Self.figure(html, version: "1.2.0", field: "rollout") == "10 % paused")
        #expect(html.contains("<span data-field=\"devices\">12</span>"))
        #expect(html.contains("<span data-field=\"silentDevices\">2</span>"))
        #expect(html.contains("data-device=\"00000000000000000000000000000002\" data-field=\"running\">1.1.0<"))
    }

    @Test func theChartsDrawEachVersionInItsOwnColour() {
        let html = FleetHTML.render(FleetSamples.day())
        // One stacked area per version that had devices; 1.2.0 never did.
        #expect(html.contains("class=\"area\" data-version=\"1.0.0\" fill=\"#4e79a7\""))
        #expect(html.contains("class=\"area\" data-version=\"1.1.0\" fill=\"#f28e2b\""))
        #expect(!html.contains("class=\"area\" data-version=\"1.2.0\""))
        // The rollout lanes: five steps of 1.1.0 (one a pause), two of 1.2.0.
        #expect(html.components(separatedBy: "class=\"rollout\" data-version=\"1.1.0\"").count - 1 == 5)
        #expect(html.components(separatedBy: "class=\"rollout\" data-version=\"1.2.0\"").count - 1 == 2)
        #expect(html.contains("data-version=\"1.1.0\" data-percent=\"25\" data-paused=\"true\""))
        // Failure bars by reason.
        #expect(html.contains("class=\"failure\" data-version=\"1.2.0\" data-reason=\"timed-out\""))
        #expect(html.contains("class=\"failure\" data-version=\"1.2.0\" data-reason=\"page-crashed\""))
    }

    @Test func thePageLoadsNothingAndRunsNothing() {
        let html = FleetHTML.render(FleetSamples.day())
        #expect(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline';"))
        for forbidden in ["<script", "http:", "https:", "src=", "href=", "@import", "url(http", "@font-face"] {
            #expect(!html.lowercased().contains(forbidden), "the page holds \(forbidden)")
        }
    }

    @Test func textFromDevicesIsEscaped() {
        var summary = FleetSamples.day()
        summary.app = "com.example.<b>notes</b>"
        summary.channel = "st\"able' & <x>"
        summary.versions[0].version = "<img src=x onerror=alert(1)>"
        summary.versions[0].rollbacks = ["<script>": 2]
        summary.silent[0].running = "</td><script>alert(1)</script>"
        summary.timeline[24].devices["\"><svg onload=alert(1)>"] = 1
        let html = FleetHTML.render(summary)
        #expect(!html.contains("<img"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("<b>"))
        #expect(!html.contains("<svg onload"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(html.contains("st&quot;able&#39; &amp; &lt;x&gt;"))
        #expect(Self.figure(html, version: "&lt;img src=x onerror=alert(1)&gt;", field: "trials") == "5")
        let text = FleetText.render(summary)
        #expect(text.contains("<img src=x onerror=alert(1)>"))
    }

    @Test func anEmptyFleetSaysSo() {
        let html = FleetHTML.render(FleetSamples.empty())
        #expect(html.contains("No reports yet for this app and channel."))
        #expect(html.contains("No devices reported yet"))
        #expect(html.contains("No rollout seen"))
        #expect(html.contains("No trials yet"))
        #expect(!html.contains("class=\"area\""))
        #expect(!html.contains("data-field=\"trials\""))
        #expect(html.contains("<span data-field=\"devices\">0</span>"))
        #expect(
            FleetText.render(FleetSamples.empty())
                == "com.example.notes · beta: 0 devices, 0 silent (window 1 d), as of 2025-11-26 00:00 UTC\n\nNo reports yet.\n")
    }

    @Test func theTextIsATableOfTheFigures() {
        let text = FleetText.render(FleetSamples.day())
        let expected = """
            com.example.notes · stable: 12 devices, 2 silent (window 1 h), as of 2025-11-26 00:00 UTC

            VERSION  NOW  INSTALLS  TRIALS  COMMITS  ROLLBACKS  FAILED  BLACKLISTS  WEB DEATHS  ERRORS/DEV-H  MEDIAN ACK  STAGED  TO RUNNING (MED/P95)  DEFERRED  FROM MIRRORS  ROLLOUT
            1.2.0      0         5       5        1          4  80.0 %           4           1         14.00     2300 ms       3        1h 30m / 1d 1h         4        90.0 %  10 % paused
            1.1.0      4         5       5        4          1  20.0 %           1           0          0.33      840 ms       0             42 s / 1h         0         0.0 %  100 %
            1.0.0      6         0       0        0          0       –           0           0             –           –       –                     –         –             –  –

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
        #expect(text == expected)
    }

    /// Devices whose reports name no version yet (`none`, a device's first report) are no
    /// release's row on the page but one line, and the chart's legend names them so.
    @Test func devicesWithoutAVersionAreALineOnThePage() {
        var summary = FleetSamples.day()
        var none = VersionSummary(version: FleetSummary.noVersion)
        none.devicesNow = 3
        summary.versions.append(none)
        summary.timeline[0].devices[FleetSummary.noVersion] = 3
        summary.silent[0].running = FleetSummary.noVersion
        let html = FleetHTML.render(summary)
        #expect(!html.contains("<th scope=\"row\" data-version=\"none\""))
        #expect(Self.figure(html, version: "none", field: "devicesNow") == nil)
        #expect(html.contains("<p class=\"waiting\"><span data-field=\"devicesWithoutVersion\">3</span> devices have not run a version yet.</p>"))
        #expect(html.contains("no version yet</li>") && !html.contains(">none</li>"))
        #expect(html.contains("data-field=\"running\">no version yet</td>"))
        #expect(Self.figure(html, version: "1.1.0", field: "installs") == "5", "the releases' rows as before")
        // Without such devices, no line.
        #expect(!FleetHTML.render(FleetSamples.day()).contains("not run a version yet"))
    }

    @Test func theSamePageForTheSameSummary() {
        #expect(FleetHTML.render(FleetSamples.day()) == FleetHTML.render(FleetSamples.day()))
    }
}

import FleetReports
import Foundation
import TestSupport
import Testing

@testable import FleetPage

/// The fleet page as headless Chromium shows it: the DOM it builds from the page (the
/// figures a reader sees), the pixels it paints (the stacked areas where the figures put
/// them) and the requests it makes (none: the page's Content-Security-Policy is enforced
/// by Chromium, CSP Level 3 §4.2, and the test shows it by a probe the policy blocks).
@Suite(.serialized) struct FleetPageBrowserTests {
    /// 1.0.0's and 1.1.0's colours in ``VersionPalette`` (the first two, oldest first).
    let colour100 = "#4e79a7"
    let colour110 = "#f28e2b"

    func write(_ html: String, _ dir: TemporaryDirectory, _ name: String = "fleet.html") throws -> String {
        let path = dir(name)
        try Data(html.utf8).write(to: URL(fileURLWithPath: path))
        return "file://" + path
    }

    @Test func chromiumShowsTheFiguresOfTheSummary() async throws {
        let dir = try TemporaryDirectory("fleet-page")
        let summary = FleetSamples.day()
        let dom = try await Chromium.dumpDOM(try write(FleetHTML.render(summary), dir))
        for v in summary.versions {
            for (field, value) in [("devicesNow", v.devicesNow), ("installs", v.installs), ("trials", v.trials), ("commits", v.commits)] {
                #expect(FleetPageTests.figure(dom, version: v.version, field: field) == "\(value)", "\(v.version) \(field)")
            }
            for (reason, count) in v.rollbacks {
                #expect(FleetPageTests.figure(dom, version: v.version, field: "rollbacks", reason: reason) == "\(count)")
            }
        }
        #expect(dom.contains("<span data-field=\"devices\">12</span>"))
        // Chromium parsed the charts as SVG elements.
        #expect(dom.contains("<path class=\"area\" data-version=\"1.0.0\""))
    }

    @Test func hostileTextStaysText() async throws {
        let dir = try TemporaryDirectory("fleet-page")
        var summary = FleetSamples.day()
        summary.versions[0].version = "<img src=x>"
        summary.channel = "<b id=\"injected\">x</b>"
        let dom = try await Chromium.dumpDOM(try write(FleetHTML.render(summary), dir))
        #expect(!dom.contains("<img"))
        #expect(!dom.contains("<b id="))
        #expect(dom.contains("&lt;b id=\"injected\"&gt;x&lt;/b&gt;"))
        #expect(dom.contains("&lt;img src=x&gt;"))
    }

    @Test func theScreenshotShowsTheStackedAreas() async throws {
        let dir = try TemporaryDirectory("fleet-page")
        let png = dir("fleet.png")
        try await Chromium.screenshot(try write(FleetHTML.render(FleetSamples.day()), dir), to: png)
        if let keep = ProcessInfo.processInfo.environment["FLEET_PAGE_SCREENSHOT"] {
            try? FileManager.default.removeItem(atPath: keep)
            try FileManager.default.copyItem(atPath: png, toPath: keep)
        }
        let image = try await PNGRaster.load(png)
        // The chart's columns: where 1.0.0's colour runs tall (a legend swatch is 12 px).
        let columns = (0..<image.width).filter { (image.longestRun(of: colour100, x: $0)?.count ?? 0) > 40 }
        let first = try #require(columns.first)
        let last = try #require(columns.last)
        #expect(last - first > 600, "the plot spans the page's width")
        // At the start all ten devices run 1.0.0: no 1.1.0 above it.
        let startColumn = first + 3
        let startRun = try #require(image.longestRun(of: colour100, x: startColumn))
        #expect((image.longestRun(of: colour110, x: startColumn)?.count ?? 0) < 3)
        // At the end six run 1.0.0 and four 1.1.0: 1.1.0's band sits on 1.0.0's, 6 : 4.
        let endColumn = last - 3
        let lower = try #require(image.longestRun(of: colour100, x: endColumn))
        let upper = try #require(image.longestRun(of: colour110, x: endColumn))
        #expect(upper.upperBound < lower.lowerBound && lower.lowerBound - upper.upperBound <= 3, "\(upper) above \(lower)")
        let ratio = Double(lower.count) / Double(upper.count)
        #expect(abs(ratio - 1.5) < 0.1, "1.0.0 : 1.1.0 = \(ratio), want 6 : 4")
        // Both stacks reach the same baseline and, with ten devices each time, the same top.
        #expect(abs(lower.upperBound - startRun.upperBound) <= 2)
        #expect(abs(upper.lowerBound - startRun.lowerBound) <= 3)
    }

    @Test func thePageRequestsNothing() async throws {
        let probe = try LoopbackHTTPServer { _ in .text("probe") }
        let dir = try TemporaryDirectory("fleet-page")
        let page = FleetHTML.render(FleetSamples.day())
        // A page with an image, a stylesheet and a frame from the probe put in: the policy
        // must stop them all; without the policy (the control) Chromium does fetch them.
        let lure =
            "<img src=\"\(probe.url("/image"))\"><link rel=\"stylesheet\" href=\"\(probe.url("/style"))\">"
            + "<iframe src=\"\(probe.url("/frame"))\"></iframe><body>"
        let lured = page.replacingOccurrences(of: "<body>", with: lure)
        _ = try await Chromium.dumpDOM(try write(page, dir, "page.html"))
        _ = try await Chromium.dumpDOM(try write(lured, dir, "lured.html"))
        #expect(probe.requests.isEmpty, "\(probe.requests)")
        let unprotected = lured.replacingOccurrences(of: "http-equiv=\"Content-Security-Policy\"", with: "name=\"x-none\"")
        _ = try await Chromium.dumpDOM(try write(unprotected, dir, "control.html"))
        #expect(Set(probe.requests.map(\.path)).isSuperset(of: ["/image", "/style"]), "the control fetched \(probe.requests)")
    }
}

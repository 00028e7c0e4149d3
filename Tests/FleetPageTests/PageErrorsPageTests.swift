import FleetReports
import Foundation
import Testing

@testable import FleetPage

/// Errors per device-hour (docs/page-errors.md#in-the-fleet) on the page and in the text of
/// `fleet status`: per version, the previous release's row beside the new one's, `–`
/// without use.
@Suite struct PageErrorsPageTests {
    @Test func thePageHasEachVersionsErrorsPerDeviceHour() {
        let html = FleetHTML.render(FleetSamples.day())
        #expect(html.contains("<th class=\"num\">Errors per device-hour</th>"))
        #expect(FleetPageTests.figure(html, version: "1.2.0", field: "errorsPerDeviceHour") == "14.00")
        #expect(FleetPageTests.figure(html, version: "1.1.0", field: "errorsPerDeviceHour") == "0.33")
        #expect(FleetPageTests.figure(html, version: "1.0.0", field: "errorsPerDeviceHour") == "–")
        // The exact figure for a scraper.
        #expect(html.contains("data-version=\"1.2.0\" data-field=\"errorsPerDeviceHour\" data-value=\"14.0\">"))
        #expect(html.contains("data-version=\"1.0.0\" data-field=\"errorsPerDeviceHour\" data-value=\"\">"))
    }

    @Test func theFoldedVersionsShowTheirsToo() {
        var summary = FleetSamples.day()
        var folded = VersionSummary(version: FleetSummary.otherKey)
        let foldedSums: [(errors: Int64, ms: Int64)] = [(errors: 5, ms: 3_600_000), (errors: 0, ms: 3_600_000)]
        folded.errors = ErrorFigures(devices: foldedSums)
        summary.other = FoldedVersions(versions: 3, figures: folded)
        let text = FleetText.render(summary)
        let header = text.split(separator: "\n").first { $0.hasPrefix("VERSION") } ?? ""
        let row = text.split(separator: "\n").first { $0.hasPrefix("(3 other versions)") } ?? ""
        let end = header.range(of: "ERRORS/DEV-H").map { header.distance(from: header.startIndex, to: $0.upperBound) } ?? 0
        #expect(row.prefix(end).hasSuffix(" 2.50"), "\(text)")
        #expect(FleetPageTests.figure(FleetHTML.render(summary), version: FleetSummary.otherKey, field: "errorsPerDeviceHour") == "2.50")
    }

    @Test func aRateIsWrittenWithTwoDecimalsOrADash() {
        #expect(FleetFormat.perHour(0.4249) == "0.42")
        #expect(FleetFormat.perHour(0) == "0.00")
        #expect(FleetFormat.perHour(1_234.5) == "1234.50")
        #expect(FleetFormat.perHour(nil) == "–")
        #expect(FleetFormat.perHour(.infinity) == "–")
    }
}

import FleetReports
import Foundation
import Testing

/// ``ErrorFigures``: the per-device rule of errors after start (docs/page-errors.md#in-the-fleet),
/// and the figure a ``VersionSummary`` carries for `fleet status --json`.
@Suite struct ErrorFiguresTests {
    static let hour: Int64 = 3_600_000

    /// The figures of devices' (problems, milliseconds) sums.
    static func figures(_ sums: [(Int64, Int64)]) -> ErrorFigures { ErrorFigures(devices: sums.map { (errors: $0.0, ms: $0.1) }) }

    @Test func ratesAreOfAllHoursAndTheMeanOfEachDevicesCappedRate() throws {
        // 2 problems in 1 h, 6 in 2 h (3 an hour), none in 1 h.
        let f = Self.figures([(2, Self.hour), (6, 2 * Self.hour), (0, Self.hour)])
        #expect(f.devices == 3 && f.errors == 8 && f.hours == 4)
        #expect(f.errorsPerDeviceHour == 2)
        let mean = try #require(f.mean)
        #expect(abs(mean - 5.0 / 3) < 1e-12)
        // The sample standard deviation of 2, 3 and 0.
        let sd = try #require(f.sd)
        let expected = (((2 - mean) * (2 - mean) + (3 - mean) * (3 - mean) + mean * mean) / 2).squareRoot()
        #expect(abs(sd - expected) < 1e-12)
    }

    @Test func aDeviceUnderTheMinimumOfUseCountsInTheTotalsButNotInTheMean() throws {
        let minimum = Int64((ErrorFigures.minDeviceHours * Double(Self.hour)).rounded())
        let f = Self.figures([(1, Self.hour), (50, minimum - 60_000)])
        #expect(f.devices == 1, "a minute short of ErrorFigures.minDeviceHours")
        #expect(f.errors == 51)
        #expect(abs(f.hours - (1 + Double(minimum - 60_000) / Double(Self.hour))) < 1e-12)
        #expect(f.mean == 1 && f.sd == nil, "one counted device has no spread")
        // Exactly the minimum counts.
        #expect(Self.figures([(1, minimum)]).devices == 1)
    }

    @Test func oneDeviceOfABillionErrorsMovesTheMeanByAtMostTheCapOverTheDevices() throws {
        let calm = (0..<40).map { i in (Int64(i % 3), Self.hour) }
        let before = try #require(Self.figures(calm).mean)
        let flooded = Self.figures(calm + [(1_000_000_000, Self.hour)])
        let after = try #require(flooded.mean)
        #expect(flooded.devices == 41)
        #expect(after - before <= ErrorFigures.maxDeviceRate / 41 + 1e-9, "\(before) → \(after)")
        #expect(after > before)
        // The pooled rate is the flood's, which is why the guard judges the mean.
        #expect((flooded.errorsPerDeviceHour ?? 0) > 1_000_000)
        // Its rate alone: capped.
        #expect(Self.figures([(1_000_000_000, Self.hour)]).mean == ErrorFigures.maxDeviceRate)
    }

    /// One device claiming 100 reports of 10⁹ ms (28,000 hours) in a day's window counts for
    /// the day: ten devices' 30 problems an hour stay at 300 over 34 hours, not 300 over 27,788.
    @Test func eachDevicesUseCountsForAtMostTheWindow() throws {
        let day = 24 * Self.hour
        let honest: [(errors: Int64, ms: Int64)] = (0..<10).map { _ in (errors: 30, ms: Self.hour) }
        let sums = honest + [(errors: 0, ms: 100 * 1_000_000_000)]
        let bounded = ErrorFigures(devices: sums, maxDeviceMs: day)
        #expect(bounded.hours == 34 && bounded.errors == 300)
        let rate = try #require(bounded.errorsPerDeviceHour)
        #expect(abs(rate - 300.0 / 34) < 1e-12)
        // Its own rate is of the day too; the honest devices' use, under the bound, is as it was.
        #expect(bounded.devices == 11)
        #expect(ErrorFigures(devices: honest, maxDeviceMs: day) == ErrorFigures(devices: honest))
        // Without the bound the claim thins the figure out to almost nothing.
        #expect((ErrorFigures(devices: sums).errorsPerDeviceHour ?? 1) < 0.02)
    }

    @Test func negativeAndOverflowingSumsAreBounded() {
        let f = Self.figures([(-5, -Self.hour), (Int64.max, Self.hour), (10, Self.hour)])
        #expect(f.errors == Int64.max, "saturates, never wraps")
        #expect(f.hours == 2)
        #expect(f.devices == 2)
    }

    @Test func withoutUseThereIsNoRate() {
        let none = Self.figures([])
        #expect(none.devices == 0 && none.errors == 0 && none.hours == 0)
        #expect(none.errorsPerDeviceHour == nil && none.mean == nil && none.sd == nil && none.bounds() == nil)
    }

    @Test func theBoundsNeverFallBelowZeroAndTheUpperOneFloorsAtThreeOverTheHours() throws {
        // Ten devices, ten hours, no problem: the mean is 0, yet the upper bound is 3 / 10 h.
        let quiet = Self.figures(Array(repeating: (0, Self.hour), count: 10))
        let b = try #require(quiet.bounds())
        #expect(b.lower == 0 && abs(b.upper - 0.3) < 1e-12)
        // A spread wider than the mean: the lower bound stops at 0.
        let spread = Self.figures([(0, Self.hour), (40, Self.hour)])
        let s = try #require(spread.bounds())
        #expect(s.lower == 0 && s.upper > 20)
        // One counted device: no sd, the bound is as wide as the cap.
        let one = try #require(Self.figures([(2, Self.hour)]).bounds(z: 1))
        #expect(one.lower == 0 && one.upper == 2 + ErrorFigures.maxDeviceRate)
    }

    @Test func theSummaryCarriesErrorsPerDeviceHourInItsJSON() throws {
        var v = VersionSummary(version: "1.1.0")
        #expect(v.errorsPerDeviceHour == nil)
        v.errors = Self.figures([(3, 2 * Self.hour)])
        #expect(v.errorsPerDeviceHour == 1.5)
        let json = try FleetSummary.encoder().encode(v)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["errorsPerDeviceHour"] as? Double == 1.5, "\(String(decoding: json, as: UTF8.self))")
        #expect((object["errors"] as? [String: Any])?["errors"] as? Int == 3)
        #expect(try FleetSummary.decoder().decode(VersionSummary.self, from: json) == v)
        // A collector before page-errors: no errors, no figure.
        v.errors = nil
        #expect(v.errorsPerDeviceHour == nil)
        let old = try FleetSummary.encoder().encode(v)
        #expect(!String(decoding: old, as: UTF8.self).contains("errorsPerDeviceHour"))
        #expect(try FleetSummary.decoder().decode(VersionSummary.self, from: old).errors == nil)
    }
}

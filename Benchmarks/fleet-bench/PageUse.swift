import ClientEngine
import ClientUpdater
import FleetReports
import Foundation
import Synchronization

/// Errors after start on the simulated fleet (scenarios `errors` and `errors-background`,
/// BENCHMARKS.md "Errors after start"): every device's page is on screen all the time and
/// loads `loadsPerHour` times an hour, the first load at its acknowledgement; a load of a
/// version throws once with that version's probability, drawn from the seed, the device and
/// the load. Each device counts with the engine's own rule (`ProblemTally`, on the
/// simulation's clock: seconds since the simulation's start) and records the `page-errors`
/// reports it says into the root's journal, at their simulated time.
final class PageUse: Sendable {
    struct Device: Sendable {
        var tally = ProblemTally()
        /// The version on screen and when its next load is (seconds since the start).
        var version: String?
        var nextLoad = 0.0
        var load: UInt64 = 0
    }
    let seed: UInt64
    let loadsPerHour: Double
    /// The share of a version's loads that throw.
    let throwRate: @Sendable (String) -> Double
    let start: Date
    private let devices: Mutex<[Device]>
    private let ticks = Mutex<[(time: Double, device: Int)]>([])

    init(devices: Int, seed: UInt64, loadsPerHour: Double, start: Date, throwRate: @escaping @Sendable (String) -> Double) {
        self.seed = seed
        self.loadsPerHour = loadsPerHour
        self.start = start
        self.throwRate = throwRate
        self.devices = Mutex(Array(repeating: Device(), count: devices))
    }

    /// Whether load `load` of `version` on device `n` throws.
    func throwsAt(_ n: Int, load: UInt64, version: String) -> Bool {
        var generator = SeededRandom(seed: seed &* 0x100_0000_01B3 ^ UInt64(n) &* 0x9E37_79B9 ^ load &* 0xC2B2_AE3D)
        _ = generator.next()
        let unit = Double(generator.next() >> 11) / Double(UInt64(1) << 53)
        return unit < throwRate(version)
    }

    /// The page of device `n` acknowledged `version` at `time` (seconds since the start): a
    /// load, and ticks where its first periods end, so that the report of each goes then.
    func acknowledged(_ n: Int, version: String, at time: Double, layout: RootLayout) {
        var outputs = use(n, until: time)
        outputs += devices.withLock { all -> [(Double, ProblemTally.Output)] in
            var d = all[n]
            defer { all[n] = d }
            d.version = version
            d.load += 1
            var out: [(Double, ProblemTally.Output)] = d.tally.acknowledged(version, at: .seconds(time)).map { (time, $0) }
            if throwsAt(n, load: d.load, version: version) {
                out += d.tally.problems(1, messages: ["TypeError: simulated (/app.js:1)"], version: version, at: .seconds(time + 1)).map {
                    (time + 1, $0)
                }
            }
            d.nextLoad = time + 3600 / loadsPerHour
            return out
        }
        ticks.withLock { t in
            for period in ProblemTally.firstPeriods { t.append((time + Double(period.components.seconds) + 1, n)) }
        }
        record(outputs, layout: layout)
    }

    /// Device `n`'s page used until `time`: its loads and the periods that ended.
    func advance(_ n: Int, until time: Double, layout: RootLayout) {
        record(use(n, until: time), layout: layout)
    }

    /// The ticks due before `end` (seconds since the start), taken.
    func ticks(before end: Double) -> [(time: Double, device: Int)] {
        ticks.withLock { t in
            let due = t.filter { $0.time < end }
            t.removeAll { $0.time < end }
            return due
        }
    }

    private func use(_ n: Int, until time: Double) -> [(Double, ProblemTally.Output)] {
        devices.withLock { all in
            var d = all[n]
            defer { all[n] = d }
            guard let version = d.version else { return [] }
            var out: [(Double, ProblemTally.Output)] = []
            while d.nextLoad <= time {
                let t = d.nextLoad
                d.load += 1
                out += d.tally.acknowledged(version, at: .seconds(t)).map { (t, $0) }
                if throwsAt(n, load: d.load, version: version) {
                    out += d.tally.problems(1, messages: ["TypeError: simulated (/app.js:1)"], version: version, at: .seconds(t + 1)).map {
                        (t + 1, $0)
                    }
                }
                d.nextLoad += 3600 / loadsPerHour
            }
            out += d.tally.due(at: .seconds(time)).map { (time, $0) }
            return out
        }
    }

    private func record(_ outputs: [(Double, ProblemTally.Output)], layout: RootLayout) {
        for (time, output) in outputs {
            guard case .report(let draft) = output else { continue }
            let at = start.addingTimeInterval(time)
            ReportJournal(layout: layout, now: { at }).record(draft)
        }
    }
}

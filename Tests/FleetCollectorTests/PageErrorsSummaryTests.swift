import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// Errors after start (`page-errors` reports, docs/page-errors.md#in-the-fleet) at a real
/// `clientctl collect` on SQLite and on PostgreSQL: the summary's figures per version and
/// `errorsPerDeviceHour` in `fleet status --json`, the `ERRORS/DEV-H` column of the text, the
/// page's cell, the `/metrics` counters (checked by promtool), and `/v1/guard`'s `errors`,
/// which count only the devices the guard trusts.
@Suite struct PageErrorsSummaryTests {
    typealias F = CollectorFixtures
    static let hour: Int64 = 3_600_000
    /// A minute less than a device's rate needs to count (`ErrorFigures.minDeviceHours`).
    static let short = Int64((ErrorFigures.minDeviceHours * Double(hour)).rounded()) - 60_000

    /// One device's `page-errors` reports: (problems or nil for none, ms of use, seconds ago).
    struct Device {
        let n: Int
        let version: String
        let periods: [(count: Int64?, ms: Int64, ago: Double)]
        var labels: [String: String] = [:]
    }

    /// 1.0.0, the previous release, on devices 1–4; 1.1.0 on devices 5–9. Device 4 used its
    /// version a minute less than a device's rate needs; device 8 has one report
    /// three days old (outside the summary's window of one day, inside the guard's, which
    /// goes by when reports were received); device 9 reports a billion problems.
    static let fleet: [Device] = [
        Device(n: 1, version: "1.0.0", periods: [(1, hour, 7_200), (nil, hour, 3_600)]),
        Device(n: 2, version: "1.0.0", periods: [(nil, hour, 3_600)]),
        Device(n: 3, version: "1.0.0", periods: [(2, hour / 2, 3_600)]),
        Device(n: 4, version: "1.0.0", periods: [(5, short, 3_600)]),
        Device(n: 5, version: "1.1.0", periods: [(4, hour, 3_600)], labels: ["ring": "beta"]),
        Device(n: 6, version: "1.1.0", periods: [(6, hour, 3_600)], labels: ["ring": "beta"]),
        Device(n: 7, version: "1.1.0", periods: [(nil, hour, 3_600)]),
        Device(n: 8, version: "1.1.0", periods: [(1_000, hour, 3 * 86_400), (3, 2 * hour, 3_600)]),
        Device(n: 9, version: "1.1.0", periods: [(1_000_000_000, hour, 3_600)]),
    ]

    /// A device's batch of its reports, as of `now`.
    static func batch(_ d: Device, now: Double) throws -> ReportBatch {
        let reports = d.periods.enumerated().map { i, p in
            var r = F.report(Int64(i + 1), .pageErrors, at: (now - p.ago).rounded(.down), running: d.version, version: d.version, ms: p.ms)
            r.count = p.count
            r.detail = p.count == nil ? nil : "TypeError: x is undefined"
            return r
        }
        let b = F.batch(device: d.n, reports)
        return d.labels.isEmpty ? b : try F.labelled(b, d.labels)
    }

    /// The figures of `version` from the devices' reports newer than `window` seconds (nil:
    /// all), in device order as the collector sums them.
    static func expected(_ version: String, window: Double? = nil, devices: Set<Int>? = nil) -> ErrorFigures {
        ErrorFigures(
            devices: fleet.filter { d in d.version == version && (devices?.contains(d.n) ?? true) }.map { d in
                let counted = d.periods.filter { window == nil || $0.ago <= window ?? 0 }
                return (errors: counted.reduce(0) { $0 + ($1.count ?? 0) }, ms: counted.reduce(0) { $0 + $1.ms })
            })
    }

    /// A collector on `database` (`sqlite` or `postgresql`) in `dir`.
    static func collector(_ database: String, _ dir: TemporaryDirectory, name: String) async throws -> CollectProcess {
        if database == "postgresql" {
            let url = try await TestPostgres.shared().createDatabase(name)
            return try await CollectProcess(database: url, scratch: dir.path)
        }
        return try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
    }

    static func summary(_ collector: CollectProcess, _ query: String = "") async throws -> (FleetSummary, [String: Any]) {
        let response = try await collector.read("v1/fleet?app=\(F.app)&channel=\(F.channel)&window=86400" + query, token: collector.token)
        guard response.status == 200 else { throw HarnessError("GET /v1/fleet: \(response.status) \(response.body)") }
        let object = try JSONSerialization.jsonObject(with: response.data) as? [String: Any] ?? [:]
        return (try FleetSummary.decoder().decode(FleetSummary.self, from: response.data), object)
    }

    static func guardFigures(_ collector: CollectProcess, _ query: String) async throws -> GuardFigures {
        let path = "v1/guard?app=\(F.app)&channel=\(F.channel)&version=1.1.0&version=1.0.0" + query
        let response = try await collector.read(path, token: collector.token)
        guard response.status == 200 else { throw HarnessError("GET /v1/guard: \(response.status) \(response.body)") }
        return try FleetSummary.decoder().decode(GuardFigures.self, from: response.data)
    }

    /// The number of a version's series on the metrics page (`name{app=…,channel=…,version="V"} N`).
    static func metric(_ text: String, _ name: String, _ version: String) -> String? {
        let prefix = "\(name){app=\"\(F.app)\",channel=\"\(F.channel)\",version=\"\(version)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    static func perHour(_ figures: ErrorFigures) -> String { figures.errorsPerDeviceHour.map { String(format: "%.2f", $0) } ?? "–" }

    @Test(arguments: ["sqlite", "postgresql"])
    func theFleetShowsErrorsPerDeviceHourAndTheGuardCountsTrustedDevicesOnly(database: String) async throws {
        let dir = try TemporaryDirectory("page-errors")
        let collector = try await Self.collector(database, dir, name: "pageerrors")
        let now = Date().timeIntervalSince1970
        for d in Self.fleet {
            let response = try await collector.post(try Self.batch(d, now: now).encoded())
            #expect(response.status == 200, "\(response.body)")
        }
        // Every device heard from so far has a history: the guard trusts them.
        let trustedBefore = Int64(Date().timeIntervalSince1970 * 1000) + 1
        try await Poll.until("the wall clock to pass \(trustedBefore) ms", every: .milliseconds(2)) {
            Int64(Date().timeIntervalSince1970 * 1000) > trustedBefore
        }

        // The summary: per version, the devices' reports of the window (a day).
        let (summary, json) = try await Self.summary(collector)
        let new = try #require(summary.versions.first { $0.version == "1.1.0" })
        let previous = try #require(summary.versions.first { $0.version == "1.0.0" })
        let newFigures = Self.expected("1.1.0", window: 86_400)
        let previousFigures = Self.expected("1.0.0", window: 86_400)
        #expect(new.errors == newFigures)
        #expect(previous.errors == previousFigures)
        #expect(previousFigures.devices == 3 && previousFigures.errors == 8, "device 4's few minutes count in the totals only")
        #expect(newFigures.errors == 1_000_000_013, "device 8's report of three days ago is outside the window")
        #expect(new.errorsPerDeviceHour == newFigures.errorsPerDeviceHour && previous.errorsPerDeviceHour == previousFigures.errorsPerDeviceHour)
        // In the JSON as `errorsPerDeviceHour`, per version.
        let versions = json["versions"] as? [[String: Any]] ?? []
        let rates = Dictionary(uniqueKeysWithValues: versions.compactMap { v in (v["version"] as? String).map { ($0, v["errorsPerDeviceHour"]) } })
        #expect((rates["1.0.0"] as? Double).map { abs($0 - (previousFigures.errorsPerDeviceHour ?? -1)) < 1e-9 } == true, "\(versions)")
        #expect((rates["1.1.0"] as? Double).map { abs($0 - (newFigures.errorsPerDeviceHour ?? -1)) < 1e-9 } == true, "\(versions)")

        // One cohort: the beta ring's two devices.
        let (beta, _) = try await Self.summary(collector, "&label=ring%3Dbeta")
        #expect(beta.versions.first { $0.version == "1.1.0" }?.errors == Self.expected("1.1.0", devices: [5, 6]))

        // `fleet status --json` carries the collector's figure; the text and the page show it.
        let base = ["fleet", "status", "--collector", collector.baseURL, "--token-file", collector.tokenPath, "--app", F.app, "--channel", F.channel]
        let status = try await ClientctlBinary.run(base + ["--json", "--html", dir("fleet.html")])
        #expect(status.status == 0, "\(status.errorOutput)")
        let printed = try #require(try JSONSerialization.jsonObject(with: status.stdout) as? [String: Any])
        let printedRates = (printed["versions"] as? [[String: Any]] ?? []).compactMap { $0["errorsPerDeviceHour"] as? Double }
        #expect(printedRates.count == 2, "\(status.output)")
        let text = try await ClientctlBinary.run(base)
        #expect(text.status == 0, "\(text.errorOutput)")
        let lines = text.output.split(separator: "\n")
        let header = try #require(lines.first { $0.hasPrefix("VERSION ") })
        #expect(header.contains("  ERRORS/DEV-H  "), "\(text.output)")
        let column = try #require(header.range(of: "ERRORS/DEV-H")).upperBound
        for (version, figures) in [("1.1.0", newFigures), ("1.0.0", previousFigures)] {
            // Right-aligned under its header, the previous release's row beside the new one's.
            let row = try #require(lines.first { $0.hasPrefix(version + " ") })
            let cell = row.prefix(header.distance(from: header.startIndex, to: column))
            #expect(cell.hasSuffix(" " + Self.perHour(figures)), "\(text.output)")
        }
        let page = try String(contentsOfFile: dir("fleet.html"), encoding: .utf8)
        for (version, figures) in [("1.1.0", newFigures), ("1.0.0", previousFigures)] {
            let cell = "data-version=\"\(version)\" data-field=\"errorsPerDeviceHour\" data-value=\"\(figures.errorsPerDeviceHour ?? -1)\">"
            #expect(page.contains(cell + Self.perHour(figures) + "</td>"), "\(version)")
        }

        // The metrics: problems and seconds of use per version, promtool-valid.
        let metrics = try await collector.read("metrics", token: collector.token)
        try metrics.body.write(toFile: dir("metrics.txt"), atomically: true, encoding: .utf8)
        let check = try await Subprocess.run("/bin/sh", ["-c", "promtool check metrics < \"$0\"", dir("metrics.txt")])
        #expect(check.status == 0, "promtool: \(check.output) \(check.errorOutput)")
        #expect(Self.metric(metrics.body, "fleet_page_errors_total", "1.1.0") == "1000001013", "every report received counts")
        #expect(Self.metric(metrics.body, "fleet_page_errors_total", "1.0.0") == "8")
        let seconds: (new: Double, previous: Double) = (7 * 3_600, Double(3.5 * 3_600) + Double(Self.short) / 1000)
        #expect(Self.metric(metrics.body, "fleet_usage_seconds_total", "1.1.0").flatMap(Double.init) == seconds.new)
        #expect(Self.metric(metrics.body, "fleet_usage_seconds_total", "1.0.0").flatMap(Double.init) == seconds.previous)
        #expect(metrics.body.contains("# HELP fleet_page_errors_total ") && metrics.body.contains("# TYPE fleet_usage_seconds_total counter"))

        // Invented ids, first heard from after `trusted-before`, report a billion problems each.
        for n in 100..<105 {
            let invented = Device(n: n, version: "1.1.0", periods: [(1_000_000_000, Self.hour, 600)])
            #expect(try await collector.post(try Self.batch(invented, now: now).encoded()).status == 200)
        }
        let judged = try await Self.guardFigures(collector, "&trusted-before=\(trustedBefore)")
        #expect(judged.untrustedDevices == 5)
        let guardNew = try #require(judged.versions.first { $0.version == "1.1.0" }?.errors)
        // Every report the trusted devices sent (the guard's window goes by receipt), no invented one.
        #expect(guardNew == Self.expected("1.1.0"))
        #expect(judged.versions.first { $0.version == "1.0.0" }?.errors == Self.expected("1.0.0"))
        // Device 9's billion moves the mean by at most the cap over the devices.
        let calm = try #require(Self.expected("1.1.0", devices: [5, 6, 7, 8]).mean)
        #expect(try #require(guardNew.mean) - calm <= ErrorFigures.maxDeviceRate / Double(guardNew.devices) + 1e-9)
        // Without `trusted-before` no device has a history: none counts.
        let nobody = try await Self.guardFigures(collector, "")
        #expect(nobody.versions.allSatisfy { $0.errors == ErrorFigures(devices: [(errors: Int64, ms: Int64)]()) }, "\(nobody.versions)")
        // The guard's cohort and `since` hold for errors as for rollbacks.
        let ring = try await Self.guardFigures(collector, "&trusted-before=\(trustedBefore)&label=ring%3Dbeta")
        #expect(ring.versions.first { $0.version == "1.1.0" }?.errors == Self.expected("1.1.0", devices: [5, 6]))
        let later = try await Self.guardFigures(collector, "&trusted-before=\(trustedBefore)&since=\(Int64(Date().timeIntervalSince1970 * 1000))")
        #expect(later.versions.allSatisfy { $0.errors?.devices == 0 && $0.errors?.errors == 0 }, "\(later.versions)")
        // The summary counts every device of an open collector (it is no judge): the invented ones too.
        let (after, _) = try await Self.summary(collector)
        let everyone: Int64 = 1_000_000_013 + 5 * 1_000_000_000
        #expect(try #require(after.versions.first { $0.version == "1.1.0" }?.errors).errors == everyone)
        #expect(collector.stop() == 0)
    }

    /// No device used a version longer than the window holds: one admitted device posting 100
    /// `page-errors` reports of 10⁹ ms each (about 28,000 hours) counts for a day of use at
    /// most, so ten devices' 30 problems an hour stay at 300 over 34 hours (8.82), where the
    /// claim alone would make them 0.01, hiding a release the guard halts.
    @Test(arguments: ["sqlite", "postgresql"])
    func oneDeviceCannotClaimMoreUseThanTheWindowHolds(database: String) async throws {
        let dir = try TemporaryDirectory("page-errors-use")
        let collector = try await Self.collector(database, dir, name: "pageerrorsuse")
        let now = Date().timeIntervalSince1970
        for n in 1...10 {
            let d = Device(n: n, version: "4.0.0", periods: [(30, Self.hour, 3_600)])
            #expect(try await collector.post(try Self.batch(d, now: now).encoded()).status == 200)
        }
        let claims = Device(n: 11, version: "4.0.0", periods: (0..<100).map { i in (nil, 1_000_000_000, 3_000 - Double(i)) })
        #expect(try await collector.post(try Self.batch(claims, now: now).encoded()).status == 200)

        let (summary, _) = try await Self.summary(collector)
        let figures = try #require(summary.versions.first { $0.version == "4.0.0" }?.errors)
        let day = 24.0
        #expect(figures.errors == 300 && figures.hours == 10 + day, "\(figures)")
        let rate = try #require(figures.errorsPerDeviceHour)
        #expect(abs(rate - 300 / (10 + day)) < 1e-9, "\(figures)")
        // The text shows the same figure.
        let text = try await ClientctlBinary.run(
            ["fleet", "status", "--collector", collector.baseURL, "--token-file", collector.tokenPath, "--app", F.app, "--channel", F.channel],
            environment: ["COLUMNS": "100"])
        #expect(text.output.split(separator: "\n").contains { $0.hasPrefix("4.0.0 ") && $0.contains(" 8.82  ") }, "\(text.output)")
        #expect(collector.stop() == 0)
    }

    /// Under manual admission: a device an operator admitted counts in the guard's errors from
    /// its first report (no history needed); one still pending (held apart) and one rejected
    /// count for nothing, however many problems they report.
    @Test(arguments: ["sqlite", "postgresql"])
    func onlyAdmittedDevicesCountUnderManualAdmission(database: String) async throws {
        let dir = try TemporaryDirectory("page-errors-admission")
        try Data("admin-token-0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: dir("admin.token")))
        chmod(dir("admin.token"), 0o600)
        let arguments = ["--admission", "manual", "--admin-token-file", dir("admin.token")]
        let collector: CollectProcess
        if database == "postgresql" {
            let url = try await TestPostgres.shared().createDatabase("pageerrorsadmission")
            collector = try await CollectProcess(database: url, arguments: arguments, scratch: dir.path)
        } else {
            collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), arguments: arguments, scratch: dir.path)
        }
        func change(_ what: String, _ key: String) async throws -> Int {
            try await Curl.request(
                collector.baseURL + "v1/devices/\(what)", method: "POST",
                headers: ["Authorization: Bearer admin-token-0123456789abcdef", "Content-Type: application/json"],
                body: Data("{\"devices\":[\"\(key)\"]}".utf8)
            ).status
        }
        let now = Date().timeIntervalSince1970
        let admitted = try DeviceSigner()
        let pending = try DeviceSigner()
        let rejected = try DeviceSigner()
        #expect(try await change("admit", admitted.publicKey) == 200, "admitted ahead of its first batch")
        let devices = [
            (admitted, Device(n: 1, version: "1.1.0", periods: [(2, Self.hour, 600)])),
            (pending, Device(n: 2, version: "1.1.0", periods: [(1_000_000_000, Self.hour, 600)])),
            (rejected, Device(n: 3, version: "1.1.0", periods: [(1_000_000_000, Self.hour, 600)])),
        ]
        for (signer, device) in devices {
            let signed = try signer.signed(try Self.batch(device, now: now))
            #expect(try await collector.post(signed.body, headers: signed.headers).status == 200)
        }
        #expect(try await change("admit", rejected.publicKey) == 200)
        #expect(try await change("reject", rejected.publicKey) == 200)
        let figures = try await Self.guardFigures(collector, "")
        let errors = try #require(figures.versions.first { $0.version == "1.1.0" }?.errors)
        let only: [(errors: Int64, ms: Int64)] = [(errors: 2, ms: Self.hour)]
        #expect(errors == ErrorFigures(devices: only), "only the admitted device: \(errors)")
        #expect(figures.versions.first { $0.version == "1.0.0" }?.errors?.devices == 0)
        #expect(collector.stop() == 0)
    }

    /// The versions folded into `other`: each device's sums over all of them together; a
    /// version listed without any report of use has figures of no device.
    @Test(arguments: ["sqlite", "postgresql"])
    func theFoldedVersionsCountTheirDevicesErrorsTogether(database: String) async throws {
        let dir = try TemporaryDirectory("page-errors-folded")
        let collector = try await Self.collector(database, dir, name: "pageerrorsfolded")
        let now = Date().timeIntervalSince1970
        // 23 versions of one device each, the later ones seen last: the 20 latest are listed,
        // 2.0.0, 2.1.0 and 2.2.0 folded. Version 2.k.0's device had k problems in an hour.
        for k in 0..<23 {
            var r = F.report(
                1, .pageErrors, at: (now - 3_000 + Double(10 * k)).rounded(.down), running: "2.\(k).0", version: "2.\(k).0", ms: Self.hour)
            r.count = k == 0 ? nil : Int64(k)
            #expect(try await collector.post(F.batch(device: 100 + k, [r]).encoded()).status == 200)
        }
        // 3.0.0 has a device, and no report of use; it is asked for by name.
        let quiet = F.batch(device: 999, [F.report(1, .heartbeat, at: (now - 7_200).rounded(.down), running: "3.0.0")])
        #expect(try await collector.post(quiet.encoded()).status == 200)
        let (summary, _) = try await Self.summary(collector, "&version=3.0.0")
        let other = try #require(summary.other)
        #expect(other.versions == 3, "\(summary.versions.map(\.version))")
        let foldedSums: [(errors: Int64, ms: Int64)] = [(errors: 0, ms: Self.hour), (errors: 1, ms: Self.hour), (errors: 2, ms: Self.hour)]
        #expect(other.figures.errors == ErrorFigures(devices: foldedSums))
        #expect(other.figures.errorsPerDeviceHour == 1)
        let listed = try #require(summary.versions.first { $0.version == "2.22.0" })
        #expect(listed.errors?.devices == 1 && listed.errorsPerDeviceHour == 22)
        let none = try #require(summary.versions.first { $0.version == "3.0.0" })
        #expect(none.errors == ErrorFigures(devices: [(errors: Int64, ms: Int64)]()) && none.errorsPerDeviceHour == nil)
        // The text (without asking for 3.0.0: four versions folded) shows the folded row's figure.
        let text = try await ClientctlBinary.run([
            "fleet", "status", "--collector", collector.baseURL, "--token-file", collector.tokenPath, "--app", F.app, "--channel", F.channel,
        ])
        let lines = text.output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("(4 other versions) ") && $0.contains(" 1.00  ") }, "\(text.output)")
        #expect(lines.contains { $0.hasPrefix("2.22.0 ") && $0.contains(" 22.00  ") }, "\(text.output)")
        #expect(collector.stop() == 0)
    }
}

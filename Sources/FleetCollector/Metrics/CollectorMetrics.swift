import ClientFoundation
import FleetReports
import Prometheus
import Synchronization

/// The collector's Prometheus metrics (`GET /metrics`, text format 0.0.4).
///
/// Labels stay bounded whatever devices send: `reason` is a closed set; `app`/`channel`
/// pairs beyond the first ``maxChannels`` are counted as `other`; per pair only the
/// ``maxVersions`` newest SemVers seen get their own `version` label (a newer one takes
/// the place of the oldest, whose series leaves), the rest are `other`.
public final class CollectorMetrics: Sendable {
    /// The registry the text is emitted from.
    public let registry = PrometheusCollectorRegistry()
    /// The most app/channel pairs with labels of their own.
    public let maxChannels: Int
    /// The most versions per app/channel with a label of their own.
    public let maxVersions: Int

    let accepted: Counter
    let duplicates: Counter
    let held: Counter
    private let refused: [RefusalReason: Counter]
    private let state = Mutex(LabelState())

    struct LabelState: Sendable {
        /// app/channel → its labelled versions.
        var channels: [String: [String]] = [:]
        /// Counters by name and labels.
        var counters: [String: Counter] = [:]
    }

    /// The per-version series: metric name, report type, whether it is labelled by reason.
    static let series: [(name: String, type: ReportKind, byReason: Bool, help: String)] = [
        ("fleet_trials_total", .trialStarted, false, "Trials started, by app, channel and version."),
        ("fleet_commits_total", .committed, false, "Trials acknowledged (committed), by app, channel and version."),
        ("fleet_rollbacks_total", .rolledBack, true, "Versions rolled back, by app, channel, version and reason."),
        ("fleet_web_process_deaths_total", .webProcessDied, true, "Web processes that died, by app, channel, version on screen and reason."),
        (
            "fleet_download_deferrals_total", .downloadDeferred, true,
            "Downloads that waited for the download policy, by app, channel, version and reason."
        ),
    ]

    /// The series of errors after start (`page-errors` reports), counted by their figures
    /// rather than one per report: problems (an absent `count`: none) and seconds of use, by
    /// app, channel and version (the page on screen). Each report counts for at most
    /// 10^9 problems and 10^9 ms, as in a summary (so no counter wraps).
    static let pageErrors = (
        name: "fleet_page_errors_total", type: ReportKind.pageErrors, byReason: false,
        help: "Problems after the acknowledgement (page-errors reports), by app, channel and version on screen; "
            + "errors per device-hour: 3600 * rate(fleet_page_errors_total) / rate(fleet_usage_seconds_total)."
    )
    static let usage = (
        name: "fleet_usage_seconds_total", type: ReportKind.pageErrors, byReason: false,
        help: "Seconds of use after the acknowledgement that page-errors reports cover, by app, channel and version on screen."
    )

    /// Metrics with the given label bounds.
    public init(maxChannels: Int = 32, maxVersions: Int = 5) {
        self.maxChannels = max(1, maxChannels)
        self.maxVersions = max(1, maxVersions)
        accepted = registry.makeCounter(descriptor: Self.descriptor("fleet_collector_reports_accepted_total", help: "Reports stored."))
        duplicates = registry.makeCounter(
            descriptor: Self.descriptor(
                "fleet_collector_reports_duplicate_total", help: "Reports received again under a stored (device, seq) and skipped."))
        held = registry.makeCounter(
            descriptor: Self.descriptor(
                "fleet_collector_reports_held_total",
                help: "Reports of devices not admitted, stored apart (in no summary or other metric until admitted)."))
        var refused: [RefusalReason: Counter] = [:]
        for reason in RefusalReason.allCases {
            refused[reason] = registry.makeCounter(
                descriptor: Self.descriptor(
                    "fleet_collector_batches_refused_total", help: "Batches refused, by the reason of the refusal (nothing of them stored)."),
                labels: [("reason", reason.rawValue)])
        }
        self.refused = refused
    }

    /// The descriptor of the counter `name` (its `_total` suffix as the unit): the same name
    /// on the page as `name`.
    static func descriptor(_ name: String, help: String) -> MetricNameDescriptor {
        guard name.hasSuffix("_total") else { return MetricNameDescriptor(metricName: name, unitName: "", helpText: help) }
        return MetricNameDescriptor(metricName: String(name.dropLast("_total".count)), unitName: "total", helpText: help)
    }

    /// A batch refused.
    public func refused(_ reason: RefusalReason) { refused[reason]?.increment() }

    /// A batch of a device not admitted, stored apart: counted, nothing else.
    public func held(_ result: IngestResult) { held.increment(by: Int64(result.accepted)) }

    /// A batch stored: its new reports counted per app, channel and version.
    public func stored(_ batch: ReportBatch, result: IngestResult, fresh: [FleetReport]) {
        accepted.increment(by: Int64(result.accepted))
        duplicates.increment(by: Int64(result.duplicates))
        // A batch's reports share a few series: each is looked up once, in the order of its
        // first report (which decides the version labels), and counted by its reports.
        var tallies: [(series: Int, version: String, reason: ReportReason?, count: Int64)] = []
        for report in fresh {
            guard let series = Self.series.firstIndex(where: { $0.type == report.type }) else { continue }
            let subject = report.type == .webProcessDied ? report.running : (report.version ?? report.running)
            let reason = Self.series[series].byReason ? report.reason : nil
            if let i = tallies.firstIndex(where: { $0.series == series && $0.version == subject && $0.reason == reason }) {
                tallies[i].count += 1
            } else {
                tallies.append((series, subject, reason, 1))
            }
        }
        for tally in tallies {
            counter(Self.series[tally.series], app: batch.app, channel: batch.channel, version: tally.version, reason: tally.reason)?
                .increment(by: tally.count)
        }
        countErrors(fresh.filter { $0.type == .pageErrors }, app: batch.app, channel: batch.channel)
    }

    /// `page-errors` reports' problems and seconds of use, per version, in the order of
    /// their first report.
    private func countErrors(_ reports: [FleetReport], app: String, channel: String) {
        let cap = FleetSummaryQuery.maxReportFigure
        var sums: [(version: String, errors: Int64, ms: Int64)] = []
        for report in reports {
            let version = report.version ?? report.running
            let errors = min(max(0, report.count ?? 0), cap)
            let ms = min(max(0, report.ms ?? 0), cap)
            if let i = sums.firstIndex(where: { $0.version == version }) {
                sums[i].errors += errors
                sums[i].ms += ms
            } else {
                sums.append((version, errors, ms))
            }
        }
        for sum in sums {
            // Both series, also at zero: a version in use without a problem is a rate of 0.
            counter(Self.pageErrors, app: app, channel: channel, version: sum.version, reason: nil)?.increment(by: sum.errors)
            if let seconds = counter(Self.usage, app: app, channel: channel, version: sum.version, reason: nil), sum.ms > 0 {
                seconds.increment(by: Double(sum.ms) / 1000)
            }
        }
    }

    /// The text exposition.
    public func text() -> String { registry.emitToString() }

    private func counter(
        _ entry: (name: String, type: ReportKind, byReason: Bool, help: String), app: String, channel: String, version: String,
        reason: ReportReason?
    ) -> Counter? {
        state.withLock { state in
            var (a, c) = (app, channel)
            let pair = app + "\u{1}" + channel
            if state.channels[pair] == nil {
                if state.channels.count < maxChannels { state.channels[pair] = [] } else { (a, c) = ("other", "other") }
            }
            let label = labelVersion(version, pair: pair, state: &state, app: a, channel: c)
            var labels = [("app", a), ("channel", c), ("version", label)]
            if entry.byReason { labels.append(("reason", (reason ?? .other).rawValue)) }
            let key = entry.name + "|" + labels.map { $0.1 }.joined(separator: "|")
            if let existing = state.counters[key] { return existing }
            let made = registry.makeCounter(descriptor: Self.descriptor(entry.name, help: entry.help), labels: labels)
            state.counters[key] = made
            return made
        }
    }

    /// The `version` label of `version` for the pair: itself when among the newest, else `other`.
    private func labelVersion(_ version: String, pair: String, state: inout LabelState, app: String, channel: String) -> String {
        guard app != "other" || channel != "other", var versions = state.channels[pair] else { return "other" }
        // A labelled version was a SemVer when it took its place: no need to read it again.
        if versions.contains(version) { return version }
        guard let v = Version(version) else { return "other" }
        if versions.count < maxVersions {
            versions.append(version)
            state.channels[pair] = versions
            return version
        }
        guard let oldestIndex = versions.indices.min(by: { (Version(versions[$0]) ?? v) < (Version(versions[$1]) ?? v) }),
            let oldest = Version(versions[oldestIndex]), v > oldest
        else { return "other" }
        // The oldest labelled version leaves: its series are unregistered, later reports of it count as other.
        let gone = versions[oldestIndex]
        for (key, counter) in state.counters
        where key.split(separator: "|", omittingEmptySubsequences: false).dropFirst().starts(with: [
            Substring(app), Substring(channel), Substring(gone),
        ]) {
            registry.unregisterCounter(counter)
            state.counters[key] = nil
        }
        versions[oldestIndex] = version
        state.channels[pair] = versions
        return version
    }
}

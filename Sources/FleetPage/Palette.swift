import FleetReports

/// The colour of each version, the same in every chart and table of a page: versions in
/// release order (oldest first) take the colours in turn, so a version keeps its colour
/// when newer ones arrive.
struct VersionPalette {
    /// Ten hues that stay apart on a white page and in a screenshot (a version's areas,
    /// its legend swatch and its rows use exactly this colour).
    static let colours = [
        "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#7f7f7f",
    ]

    /// Every version of the summary, oldest first (versions seen only in the timeline or
    /// the rollouts come before the summary's, which is newest first).
    let oldestFirst: [String]
    private let byVersion: [String: String]

    init(_ summary: FleetSummary) {
        var seen = Set<String>()
        let listed = summary.versions.map(\.version).filter { seen.insert($0).inserted }
        var extras: [String] = []
        for point in summary.timeline {
            extras += point.devices.keys.sorted().filter { seen.insert($0).inserted }
        }
        extras += summary.rollouts.map(\.version).filter { seen.insert($0).inserted }
        oldestFirst = extras + listed.reversed()
        var byVersion: [String: String] = [:]
        for (index, version) in oldestFirst.enumerated() {
            byVersion[version] = Self.colours[index % Self.colours.count]
        }
        self.byVersion = byVersion
    }

    func colour(_ version: String) -> String { byVersion[version] ?? "#7f7f7f" }
}

/// The colour of a reason in the failure bars: fixed per reason, so pages compare.
enum ReasonPalette {
    static let colours = ["#b91c1c", "#6d28d9", "#c2410c", "#0f766e", "#334155", "#a16207", "#be185d", "#1d4ed8"]

    static func colour(_ reason: String) -> String {
        guard let index = ReportReason.allCases.firstIndex(where: { $0.rawValue == reason }) else { return "#6b7280" }
        return colours[index % colours.count]
    }
}

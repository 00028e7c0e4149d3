import ClientFoundation
import FleetReports
import Foundation

/// The collector's `GET /v1/guard` (docs/fleet-reports.md#the-rollout-guard): what a
/// ``GuardFleet`` that asks a collector sends and how it reads the answer. The request
/// itself (URL, token, transport, statuses) is the fleet's; asking and judging are here,
/// tested without a network.
extension GuardQuery {
    /// The query string's items: `app`, `channel`, each `version`, `trusted-before` (and
    /// `since`) in milliseconds since 1970, and one `label=KEY=VALUE` per label in key order.
    public var collectorItems: [URLQueryItem] {
        var items = [URLQueryItem(name: "app", value: app), URLQueryItem(name: "channel", value: channel)]
        items += versions.map { URLQueryItem(name: "version", value: $0) }
        items.append(URLQueryItem(name: "trusted-before", value: String(Self.millis(trustedBefore))))
        if let since { items.append(URLQueryItem(name: "since", value: String(Self.millis(since)))) }
        items += labels.assignments.map { URLQueryItem(name: "label", value: $0) }
        return items
    }

    /// The figures in the collector's answer `data` to ``collectorItems``.
    /// - Throws: ``GuardError`` `.rejected` (exit 65) for an answer that is not the guard's
    ///   figures, or not of the cohort asked for (a collector before labels ignores `label`:
    ///   its whole fleet must not pass for a cohort).
    public func figures(inCollectorAnswer data: Data) throws -> GuardFigures {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let figures: GuardFigures
        do {
            figures = try decoder.decode(GuardFigures.self, from: data)
        } catch {
            throw GuardError(.rejected, "GET v1/guard: the answer is not the guard's figures (\(error))")
        }
        guard (figures.labels ?? [:]) == labels.labels else {
            let what = figures.labels.map { "the devices labelled '\(Self.oneLine(LabelFilter.text($0)))'" } ?? "every device"
            throw GuardError(
                .rejected,
                "GET v1/guard: the collector answered for \(what), not for --label \(labels.assignments.joined(separator: " --label ")) "
                    + "(a collector before labels ignores --label: upgrade it)")
        }
        return figures
    }

    /// A time as the collector's query takes it: whole milliseconds since 1970, rounded down.
    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Text from the collector as one printable line: at most 300 characters, newlines as
    /// spaces, every other control or bidi character escaped.
    static func oneLine(_ text: String) -> String {
        TerminalText.escaped(String(text.replacingOccurrences(of: "\n", with: " ").prefix(300)))
    }
}

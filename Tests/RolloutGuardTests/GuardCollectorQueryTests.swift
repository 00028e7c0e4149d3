import ClientFoundation
import FleetReports
import Foundation
import RolloutGuard
import Testing

/// What the guard asks a collector (`GET /v1/guard`) and how it reads the answer, without
/// a network: the query string's items, the figures, and the answers it refuses.
@Suite struct GuardCollectorQueryTests {
    /// Versions 1.1.0 and 1.0.0, a window with a resume, the cohort store=12 and ring=beta.
    let query: GuardQuery

    init() throws {
        query = GuardQuery(
            app: "com.example.notes", channel: "stable", versions: ["1.1.0", "1.0.0"],
            trustedBefore: Date(timeIntervalSince1970: 1_790_000_000.9876), since: Date(timeIntervalSince1970: 1_790_086_400),
            labels: try LabelFilter(["store=12", "ring=beta"]))
    }

    static func answer(labels: [String: String]?) throws -> Data {
        let figures = GuardFigures(
            app: "com.example.notes", channel: "stable", admission: "open", trust: GuardFigures.admittedOrHistory,
            trustedBefore: Date(timeIntervalSince1970: 1_790_000_000), since: nil,
            versions: [VersionFigures(version: "1.1.0", trials: 40, failed: 12)], reported: ["0.9.0"], untrustedDevices: 2, labels: labels)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(figures)
    }

    @Test func theQueryNamesTheVersionsTheWindowInMillisecondsAndTheCohortInKeyOrder() {
        let items = query.collectorItems.map { "\($0.name)=\($0.value ?? "")" }
        #expect(
            items == [
                "app=com.example.notes", "channel=stable", "version=1.1.0", "version=1.0.0", "trusted-before=1790000000987",
                "since=1790086400000", "label=ring=beta", "label=store=12",
            ])
        var everyDevice = query
        (everyDevice.since, everyDevice.labels) = (nil, LabelFilter())
        #expect(everyDevice.collectorItems.map(\.name) == ["app", "channel", "version", "version", "trusted-before"])
    }

    @Test func theAnswerOfTheCohortAskedForIsItsFigures() throws {
        let figures = try query.figures(inCollectorAnswer: try Self.answer(labels: ["ring": "beta", "store": "12"]))
        #expect(figures.versions == [VersionFigures(version: "1.1.0", trials: 40, failed: 12)] && figures.untrustedDevices == 2)
        #expect(figures.trustedBefore == Date(timeIntervalSince1970: 1_790_000_000))
    }

    @Test func anAnswerThatIsNotTheGuardsFiguresIsRefused() {
        let error = #expect(throws: GuardError.self) { try query.figures(inCollectorAnswer: Data("{\"app\": 1}".utf8)) }
        #expect(error?.code == .rejected && error?.kind.exitStatus == 65)
        #expect(error?.message.hasPrefix("GET v1/guard: the answer is not the guard's figures (") == true, "\(error?.message ?? "")")
    }

    /// A collector before labels ignores `label`: its whole fleet must not pass for the cohort's.
    @Test func anAnswerForAnotherCohortIsRefused() throws {
        let everyDevice = try Self.answer(labels: nil)
        let error = #expect(throws: GuardError.self) { try query.figures(inCollectorAnswer: everyDevice) }
        #expect(error?.code == .rejected)
        #expect(
            error?.message
                == "GET v1/guard: the collector answered for every device, not for --label ring=beta --label store=12 "
                + "(a collector before labels ignores --label: upgrade it)")
        let other = try Self.answer(labels: ["store": "14"])
        let named = #expect(throws: GuardError.self) { try query.figures(inCollectorAnswer: other) }
        #expect(named?.message.contains("answered for the devices labelled 'store=14', not for --label") == true, "\(named?.message ?? "")")
        var whole = query
        whole.labels = LabelFilter()
        #expect(throws: GuardError.self) { try whole.figures(inCollectorAnswer: try Self.answer(labels: ["store": "14"])) }
        #expect(try whole.figures(inCollectorAnswer: everyDevice).app == "com.example.notes")
    }
}

import ClientUpdater
import FleetReports
import Foundation
import Testing

@testable import ClientEngine

/// The rule that counts a page's problems after its acknowledgement (docs/page-errors.md):
/// periods of use, bounded messages, the version leaving the screen, a host that stops and
/// starts again, and the first hour's local rollback. Pure: monotonic readings in, reports out.
@Suite struct ProblemTallyTests {
    static func minutes(_ m: Int64) -> Duration { .seconds(m * 60) }

    /// The reports among `outputs`.
    static func reports(_ outputs: [ProblemTally.Output]) -> [ReportDraft] {
        outputs.compactMap {
            if case .report(let draft) = $0 { return draft }
            return nil
        }
    }

    @Test func periodsOfUseEndAtFiveAndFifteenMinutesAnHourThenEverySixHours() {
        var tally = ProblemTally()
        let out1 = tally.acknowledged("1.1.0", at: .zero)
        #expect(out1.isEmpty)
        #expect(tally.nextDue(at: .zero) == Self.minutes(5))
        let out0 = tally.due(at: Self.minutes(5))
        #expect(Self.reports(out0).first?.ms == 5 * 60_000 && Self.reports(out0).first?.count == nil)
        let out2 = tally.problems(4, messages: ["TypeError: x is undefined (/app.js:12)"], version: "1.1.0", at: Self.minutes(5))
        #expect(out2.isEmpty)
        let out3 = tally.due(at: Self.minutes(14))
        #expect(out3.isEmpty)
        let first = Self.reports(tally.due(at: Self.minutes(15)))
        #expect(first.count == 1)
        #expect(first.first?.type == .pageErrors && first.first?.version == "1.1.0" && first.first?.running == "1.1.0")
        #expect(first.first?.count == 4 && first.first?.ms == 10 * 60_000)
        #expect(first.first?.detail == "TypeError: x is undefined (/app.js:12)")
        #expect(tally.nextDue(at: Self.minutes(15)) == Self.minutes(60))
        // A quiet period still reports its use, without a count: the rate's denominator.
        let second = Self.reports(tally.due(at: Self.minutes(60)))
        #expect(second.first?.count == nil && second.first?.ms == 45 * 60_000 && second.first?.detail == nil)
        #expect(tally.nextDue(at: Self.minutes(60)) == Self.minutes(60 + 360))
        let early = Self.reports(tally.due(at: Self.minutes(60 + 359)))
        #expect(early.isEmpty)
        let third = Self.reports(tally.due(at: Self.minutes(60 + 360)))
        #expect(third.map(\.ms) == [Int64(360 * 60_000)])
    }

    @Test func messagesAreFewDistinctOneLineAndShort() {
        var tally = ProblemTally()
        _ = tally.acknowledged("2.0.0", at: .zero)
        let long = String(repeating: "é", count: 100)
        _ = tally.problems(1, messages: ["a\nb", "a\nb", long], version: "2.0.0", at: .seconds(1))
        _ = tally.problems(1, messages: ["third", "fourth"], version: "2.0.0", at: .seconds(2))
        let report = Self.reports(tally.left(at: .seconds(3))).first
        let kept = report?.detail?.components(separatedBy: " | ") ?? []
        #expect(kept.count == ProblemTally.maxMessages)
        #expect(kept.first == "a b")
        #expect(kept.allSatisfy { $0.utf8.count <= ProblemTally.maxMessageBytes })
        #expect(!kept.contains("fourth"))
        #expect(report?.count == 2)
    }

    /// A kept message is one line that reads as its bytes: line and paragraph separators
    /// (U+2028, U+2029, which break a line in many viewers) and format characters (bidi
    /// controls such as U+202E, which reorder what follows on a terminal, zero-width
    /// characters, a byte order mark) become spaces, as the control characters do (red team,
    /// issue 75). So does a period a host kept from before.
    @Test func messagesKeepNoLineOrParagraphSeparatorOrFormatCharacter() {
        var tally = ProblemTally()
        _ = tally.acknowledged("2.0.0", at: .zero)
        let messages = ["a\u{2028}b", "c\u{2029}d", "e\u{202E}f\u{200B}g\u{FEFF}h\u{2066}i\u{85}j"]
        _ = tally.problems(1, messages: messages, version: "2.0.0", at: .seconds(1))
        let detail = Self.reports(tally.left(at: .seconds(2))).first?.detail
        #expect(detail == "a b | c d | e f g h i j")
        #expect(detail?.split(whereSeparator: \.isNewline).count == 1)

        var saved = ProblemTally.Saved(
            version: "2.0.0", usedBeforeMs: 0, usedMs: 1000, problems: 1, messages: ["x\u{2028}y", "x\u{2029}y"], loads: 1, failedLoads: 1,
            judged: false)
        saved.messages.append("z\u{202E}")
        var next = ProblemTally(saved: saved)
        #expect(Self.reports(next.left(at: .zero)).first?.detail == "x y | z")
    }

    @Test func anOldTabsProblemsAndProblemsBeforeAnyAcknowledgementAreNotCounted() {
        var tally = ProblemTally()
        let out4 = tally.problems(5, messages: ["early"], version: "1.0.0", at: .zero)
        #expect(out4.isEmpty)
        _ = tally.acknowledged("1.1.0", at: .zero)
        _ = tally.problems(5, messages: ["old tab"], version: "1.0.0", at: .seconds(1))
        let out5 = tally.left(at: .seconds(2))
        #expect(Self.reports(out5).first?.count == nil)
    }

    @Test func aNewVersionOnScreenReportsWhatIsLeftOfTheOldOne() {
        var tally = ProblemTally()
        _ = tally.acknowledged("1.0.0", at: .zero)
        _ = tally.problems(3, messages: [], version: "1.0.0", at: Self.minutes(1))
        let out = Self.reports(tally.acknowledged("1.1.0", at: Self.minutes(10)))
        #expect(out.count == 1 && out.first?.version == "1.0.0" && out.first?.count == 3 && out.first?.ms == 10 * 60_000)
        #expect(tally.version == "1.1.0")
        #expect(tally.nextDue(at: Self.minutes(10)) == Self.minutes(15), "the new version's first period starts at its acknowledgement")
    }

    @Test func aHostThatStopsKeepsItsPeriodAndTheNextStartGoesOn() {
        var tally = ProblemTally()
        _ = tally.acknowledged("1.1.0", at: .zero)
        _ = tally.problems(2, messages: ["boom"], version: "1.1.0", at: Self.minutes(4))
        tally.stop(at: Self.minutes(10))
        #expect(tally.nextDue(at: Self.minutes(10)) == nil, "no use while stopped")
        let saved = tally.snapshot(at: Self.minutes(99))
        #expect(saved?.usedMs == 10 * 60_000 && saved?.problems == 2)
        // The next start: a fresh monotonic clock, the saved period. Its 5 minutes ended
        // while the host ran before: reported at the first moment it can be.
        var next = ProblemTally(saved: saved)
        let atStart = Self.reports(next.acknowledged("1.1.0", at: .zero))
        #expect(atStart.map(\.ms) == [10 * 60_000] && atStart.first?.count == 2 && atStart.first?.detail == "boom")
        let later = Self.reports(next.due(at: Self.minutes(5)))
        #expect(later.map(\.ms) == [5 * 60_000] && later.first?.count == nil, "the 15-minute period goes on from there")
    }

    @Test func theFirstHourFailsWhenMostLoadsHadAProblem() {
        var tally = ProblemTally()
        var rollBacks: [String] = []
        func note(_ out: [ProblemTally.Output]) {
            for case .rollBack(let v) in out { rollBacks.append(v) }
        }
        // Load 1 throws, load 2 does not, load 3 throws twice: 2 of 3.
        note(tally.acknowledged("1.1.0", at: .zero))
        note(tally.problems(1, messages: [], version: "1.1.0", at: .seconds(1)))
        note(tally.acknowledged("1.1.0", at: Self.minutes(5)))
        #expect(rollBacks.isEmpty, "fewer than three loads: nothing judged")
        note(tally.acknowledged("1.1.0", at: Self.minutes(10)))
        note(tally.problems(1, messages: [], version: "1.1.0", at: Self.minutes(10) + .seconds(1)))
        note(tally.problems(1, messages: [], version: "1.1.0", at: Self.minutes(10) + .seconds(2)))
        #expect(rollBacks == ["1.1.0"])
        note(tally.acknowledged("1.1.0", at: Self.minutes(20)))
        note(tally.problems(1, messages: [], version: "1.1.0", at: Self.minutes(20) + .seconds(1)))
        #expect(rollBacks == ["1.1.0"], "said once")
    }

    @Test func problemsAfterTheFirstHourNeverRollBack() {
        var tally = ProblemTally()
        var rollBacks = 0
        _ = tally.acknowledged("1.1.0", at: .zero)
        for load in 1...6 {
            let t = Self.minutes(60) + Self.minutes(Int64(load))
            for case .rollBack in tally.acknowledged("1.1.0", at: t) { rollBacks += 1 }
            for case .rollBack in tally.problems(1, messages: [], version: "1.1.0", at: t + .seconds(1)) { rollBacks += 1 }
        }
        #expect(rollBacks == 0)
    }

    @Test func aHalfOfLoadsIsNotMost() {
        var tally = ProblemTally()
        var rollBacks = 0
        for load in 0..<4 {
            let t = Self.minutes(Int64(load))
            for case .rollBack in tally.acknowledged("1.1.0", at: t) { rollBacks += 1 }
            if !load.isMultiple(of: 2) {
                for case .rollBack in tally.problems(9, messages: [], version: "1.1.0", at: t + .seconds(1)) { rollBacks += 1 }
            }
        }
        #expect(rollBacks == 0, "loads 2 and 4 of 4 threw: never more than half")
    }

    @Test func countsSaturateInsteadOfWrapping() {
        var tally = ProblemTally()
        _ = tally.acknowledged("1.1.0", at: .zero)
        _ = tally.problems(Int64.max, messages: [], version: "1.1.0", at: .seconds(1))
        _ = tally.problems(Int64.max, messages: [], version: "1.1.0", at: .seconds(2))
        let out6 = tally.left(at: .seconds(3))
        #expect(Self.reports(out6).first?.count == Int64.max)
    }

    @Test func anAppKindMustBeAShortWord() {
        #expect(PageProblems.kindProblem("checkout-failed") == nil)
        #expect(PageProblems.kindProblem("sync.v2_retry") == nil)
        #expect(PageProblems.kindProblem("")?.contains("empty") == true)
        #expect(PageProblems.kindProblem("bad kind!")?.contains("only letters") == true)
        #expect(PageProblems.kindProblem(String(repeating: "a", count: 33))?.contains("longer than 32") == true)
        #expect(PageProblems.kindProblem("caf\u{e9}") != nil)
    }
}

import ShellRules
import Testing

/// ``RollbackWatch``'s rule, on an injected clock (no sleeping, no window): the shell's own
/// type, from ShellRules, which links no GTK or WebKit.
@Suite struct RollbackWatchTests {
    @Test func aPageThatNeverAcknowledgesGetsAReloadThenClearedStorageThenTheSeed() {
        var watch = RollbackWatch(timeout: 10)
        watch.watch("1.0.0", cause: .rollback, now: 100)
        #expect(watch.deadline == 110)
        #expect(watch.due(now: 109.9) == nil, "not before the timeout")
        let first = watch.due(now: 110)
        #expect(first?.number == 1 && first?.remedy == .reload && first?.version == "1.0.0" && first?.cause == .rollback)
        #expect(first?.reason == "no-acknowledgement" && first?.waited == 10)
        #expect(watch.due(now: 115) == nil, "a new wait from the reload")
        let second = watch.due(now: 120)
        #expect(second?.number == 2 && second?.remedy == .clearStorage)
        let third = watch.due(now: 130.5)
        #expect(third?.number == 3 && third?.remedy == .seed && third?.waited == 10.5)
        #expect(watch.version == nil && watch.deadline == nil && watch.due(now: 1000) == nil, "nothing watched after the seed")
    }

    @Test func anAcknowledgementEndsTheWatchAndSaysHowManyStepsItTook() {
        var watch = RollbackWatch(timeout: 5)
        watch.watch("1.0.0", cause: .rollback, now: 0)
        _ = watch.due(now: 5)
        #expect(watch.acknowledged("1.1.0") == nil, "an old page's late acknowledgement changes nothing")
        #expect(watch.steps == 1)
        #expect(watch.acknowledged("1.0.0") == 1)
        #expect(watch.deadline == nil && watch.due(now: 100) == nil)
        #expect(watch.acknowledged("1.0.0") == nil, "once")
    }

    @Test func aPageErrorIsTheCauseReportedNotAShorterWait() {
        var watch = RollbackWatch(timeout: 5)
        watch.watch("1.0.0", cause: .start, now: 0)
        watch.pageError("VersionError: the requested version (1) is less than the existing version (2)", version: "1.0.0")
        watch.pageError("a second error", version: "1.0.0")
        watch.pageError("another page's error", version: "1.1.0")
        #expect(watch.due(now: 1) == nil)
        let step = watch.due(now: 5)
        #expect(step?.reason == "page-error" && step?.pageError?.hasPrefix("VersionError") == true && step?.cause == .start)
        #expect(watch.due(now: 10)?.reason == "no-acknowledgement", "the error belonged to the load before")
    }

    @Test func aTrialOrTheSeedStopsTheWatchAndARollbackOntoTheSameVersionKeepsItsSteps() {
        var watch = RollbackWatch(timeout: 5)
        watch.watch("1.0.0", cause: .rollback, now: 0)
        _ = watch.due(now: 5)
        watch.watch("1.0.0", cause: .rollback, now: 7)
        #expect(watch.steps == 1 && watch.deadline == 12, "the rule goes on where it was")
        #expect(watch.due(now: 12)?.remedy == .clearStorage)
        watch.stop()
        #expect(watch.deadline == nil && watch.due(now: 100) == nil)
        watch.watch("1.2.0", cause: .rollback, now: 100)
        #expect(watch.steps == 0 && watch.due(now: 105)?.remedy == .reload, "another version starts over")
    }
}

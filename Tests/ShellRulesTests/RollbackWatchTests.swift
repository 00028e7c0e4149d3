import ShellRules
import Testing

/// ``RollbackWatch``'s rule, on an injected clock (no sleeping, no window): the shell's own
/// type, from ShellRules, which links no GTK or WebKit.
@Suite struct RollbackWatchTests {
    @Test func aPageThatNeverAcknowledgesGetsAReloadThenClearedStorageThenTheSeed() {
        var watch = RollbackWatch(timeout: .seconds(10))
        watch.watch("1.0.0", cause: .rollback, now: .seconds(100))
        #expect(watch.deadline == .seconds(110))
        #expect(watch.due(now: .milliseconds(109900)) == nil, "not before the timeout")
        let first = watch.due(now: .seconds(110))
        #expect(first?.number == 1 && first?.remedy == .reload && first?.version == "1.0.0" && first?.cause == .rollback)
        #expect(first?.reason == "no-acknowledgement" && first?.waited == .seconds(10))
        #expect(watch.due(now: .seconds(115)) == nil, "a new wait from the reload")
        let second = watch.due(now: .seconds(120))
        #expect(second?.number == 2 && second?.remedy == .clearStorage)
        let third = watch.due(now: .milliseconds(130500))
        #expect(third?.number == 3 && third?.remedy == .seed && third?.waited == .milliseconds(10500))
        #expect(watch.version == nil && watch.deadline == nil && watch.due(now: .seconds(1000)) == nil, "nothing watched after the seed")
    }

    @Test func anAcknowledgementEndsTheWatchAndSaysHowManyStepsItTook() {
        var watch = RollbackWatch(timeout: .seconds(5))
        watch.watch("1.0.0", cause: .rollback, now: .zero)
        _ = watch.due(now: .seconds(5))
        #expect(watch.acknowledged("1.1.0") == nil, "an old page's late acknowledgement changes nothing")
        #expect(watch.steps == 1)
        #expect(watch.acknowledged("1.0.0") == 1)
        #expect(watch.deadline == nil && watch.due(now: .seconds(100)) == nil)
        #expect(watch.acknowledged("1.0.0") == nil, "once")
    }

    @Test func aPageErrorIsTheCauseReportedNotAShorterWait() {
        var watch = RollbackWatch(timeout: .seconds(5))
        watch.watch("1.0.0", cause: .start, now: .zero)
        watch.pageError("VersionError: the requested version (1) is less than the existing version (2)", version: "1.0.0")
        watch.pageError("a second error", version: "1.0.0")
        watch.pageError("another page's error", version: "1.1.0")
        #expect(watch.due(now: .seconds(1)) == nil)
        let step = watch.due(now: .seconds(5))
        #expect(step?.reason == "page-error" && step?.pageError?.hasPrefix("VersionError") == true && step?.cause == .start)
        #expect(watch.due(now: .seconds(10))?.reason == "no-acknowledgement", "the error belonged to the load before")
    }

    @Test func aTrialOrTheSeedStopsTheWatchAndARollbackOntoTheSameVersionKeepsItsSteps() {
        var watch = RollbackWatch(timeout: .seconds(5))
        watch.watch("1.0.0", cause: .rollback, now: .zero)
        _ = watch.due(now: .seconds(5))
        watch.watch("1.0.0", cause: .rollback, now: .seconds(7))
        #expect(watch.steps == 1 && watch.deadline == .seconds(12), "the rule goes on where it was")
        #expect(watch.due(now: .seconds(12))?.remedy == .clearStorage)
        watch.stop()
        #expect(watch.deadline == nil && watch.due(now: .seconds(100)) == nil)
        watch.watch("1.2.0", cause: .rollback, now: .seconds(100))
        #expect(watch.steps == 0 && watch.due(now: .seconds(105))?.remedy == .reload, "another version starts over")
    }
}

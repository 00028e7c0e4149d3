import ClientFoundation
import ClientUpdater
import Foundation
import StrictJSON
import TestSupport
import Testing

@testable import SignedArchive

/// A disk that fills or fails a write, at every write point of an install: the built
/// binary runs with `CLIENTCTL_FAIL_AT=<point>:<n>:<errno>` (``FaultPoint``), so the n-th
/// hit of the point fails as the write there fails on a full (`ENOSPC`) or failing (`EIO`)
/// disk, and the process goes on with its own handling of that failure. After it the root
/// is as before or in a state a plain rerun completes, and that rerun completes the install.
@Suite struct DiskFaultTests {
    /// What a failing write at a point does to `install`.
    enum Outcome: Sendable {
        /// The install stops: one line naming the disk's failure, exit 73, 1.1.0 not selected.
        case fails
        /// The install stops after the commit point: the same line and exit, 1.1.0 installed.
        case failsInstalled
        /// The write's failure is not the install's (the clock's floor, the check's record): it completes.
        case completes
    }

    /// A point on the v1.0.0 → v1.1.0 archive install's path, the errno it fails with, and
    /// what `install` then does. `atomic.*:1` is the sidecar, `:2` time.json (the clock's floor,
    /// kept in memory when it cannot be written), `:3` state.json, `:4` last-check.json, in
    /// the usual order (``outcome(of:_:)`` says why the atomic writes are told apart by name).
    struct Case: Sendable, CustomTestStringConvertible {
        let point: String
        let errno: String
        let outcome: Outcome
        var testDescription: String { "\(point):\(errno)" }
        var variable: String {
            let parts = point.split(separator: ":")
            return "\(parts[0]):\(parts.count > 1 ? parts[1] : "1"):\(errno)"
        }
    }

    static let archivePoints: [(String, Outcome)] = [
        ("download.chunk:1", .fails), ("download.chunk:10", .fails),
        ("unpack.entry:1", .fails), ("unpack.entry:7", .fails),
        ("unpack.done", .fails),
        ("atomic.written:1", .fails), ("atomic.before-rename:1", .fails), ("atomic.renamed:1", .fails),
        ("promote.sidecar-written", .fails), ("promote.renamed", .failsInstalled),
        ("atomic.written:2", .completes), ("atomic.before-rename:2", .completes), ("atomic.renamed:2", .completes),
        ("atomic.written:3", .failsInstalled), ("atomic.before-rename:3", .failsInstalled), ("atomic.renamed:3", .failsInstalled),
        ("atomic.written:4", .completes), ("atomic.before-rename:4", .completes), ("atomic.renamed:4", .completes),
    ]

    static let cases: [Case] = ["ENOSPC", "EIO"].flatMap { errno in
        archivePoints.map { Case(point: $0.0, errno: errno, outcome: $0.1) }
    }

    /// What the failed write was: the table's for every point but the atomic writes, whose
    /// count is not fixed: `time.json` is written before `state.json` only when the release's
    /// `published` raises the clock's floor, and `published` has whole seconds: the template
    /// publishes 1.0.0 and 1.1.0 in the same second or in two. So the n-th atomic write is
    /// told by what `install` said: the sidecar or `clients/` (the install stops),
    /// `state.json` or the root (it stops after the commit point), or nothing (a record: it
    /// completes).
    static func outcome(of c: Case, _ run: Subprocess.Result) -> Outcome {
        guard c.point.hasPrefix("atomic.") else { return c.outcome }
        if run.status == 0 { return .completes }
        // The fsync after the rename names the folder: `clients/` is the sidecar's, the
        // root's is state.json's (the root's other writes are records: they complete).
        if run.errorOutput.contains("/clients/v1.1.0.json") || run.errorOutput.contains("/root/clients: ") { return .fails }
        #expect(
            run.errorOutput.contains("/root/state.json") || run.errorOutput.contains("/root: "),
            "\(c.variable): not the sidecar's nor state.json's write: \(run.errorOutput)")
        return .failsInstalled
    }

    static func reason(_ errno: String) -> String {
        String(cString: strerror(errno == "EIO" ? EIO : ENOSPC))
    }

    @Test(arguments: cases)
    func aFailedWriteLeavesTheRootCompletable(_ c: Case) async throws {
        let template = try CrashTemplate.shared.get()
        let device = try await CrashCase(template)
        let stateBefore = try Data(contentsOf: URL(fileURLWithPath: device.root + "/state.json"))

        let failed = try await device.install(environment: ["CLIENTCTL_FAIL_AT": c.variable])
        let outcome = Self.outcome(of: c, failed)
        switch outcome {
        case .fails, .failsInstalled:
            #expect(failed.status == 73, "\(c.variable): exit \(failed.status): \(failed.errorOutput)")
            let lines = failed.errorOutput.split(separator: "\n")
            #expect(lines.count == 1, "\(c.variable): not one line: \(failed.errorOutput)")
            #expect(
                failed.errorOutput.hasPrefix("clientctl: ") && failed.errorOutput.contains(Self.reason(c.errno)),
                "\(c.variable): \(failed.errorOutput)")
        case .completes:
            #expect(failed.status == 0, "\(c.variable): exit \(failed.status): \(failed.errorOutput)")
        }
        try await device.expectConsistentAfterCrash(c.variable)
        try expectNoHalfWrites(device, c.variable)
        let stateAfter = try Data(contentsOf: URL(fileURLWithPath: device.root + "/state.json"))
        #expect((try? StrictJSON.parseObject(stateAfter)) != nil, "\(c.variable): state.json does not parse")
        let status = try await device.status(c.variable)
        switch outcome {
        case .fails:
            #expect(stateAfter == stateBefore, "\(c.variable): state.json changed")
            #expect(device.installedVersions(status) == ["1.0.0"], "\(c.variable): \(device.installedVersions(status))")
            #expect(status["selected"] as? String == "1.0.0", "\(c.variable): selected \(String(describing: status["selected"]))")
        case .failsInstalled:
            // The version folder is committed; the state is the old one or the new one, whole.
            #expect(device.installedVersions(status) == ["1.0.0", "1.1.0"], "\(c.variable): \(device.installedVersions(status))")
        case .completes:
            try await device.expectInstalled(c.variable)
        }
        if c.point.hasPrefix("download.") && c.errno == "ENOSPC" {
            #expect(device.partialDownloadSize() == nil, "\(c.variable): a download that filled the disk was kept")
        }

        let rerun = try await device.install()
        #expect(rerun.status == 0, "\(c.variable): rerun failed: \(rerun.errorOutput)")
        try await device.expectInstalled(c.variable)
    }

    /// After a failure that is not a crash the process cleaned up: no temporary file of an
    /// atomic write and no unpacked staging folder is left (a download kept to resume may be).
    func expectNoHalfWrites(_ device: CrashCase, _ context: String) throws {
        let clients = try FileManager.default.contentsOfDirectory(atPath: device.clients)
        let root = try FileManager.default.contentsOfDirectory(atPath: device.root)
        let half =
            clients.filter { $0.contains(".tmp-") || ($0.hasPrefix(".staging-") && !$0.hasPrefix(".staging-partial-")) }
            + root.filter { $0.contains(".tmp-") }
        #expect(half.isEmpty, "\(context): left behind \(half)")
    }

    // MARK: The patch and file-list paths

    typealias Feed = DeltaDeviceTests.Feed

    /// A write failing on the patch path ends that path with a note naming the failure; the
    /// full archive installs in the same run (a disk that stays full refuses the archive
    /// before its first byte: `FullDiskTests`).
    @Test(arguments: ["delta.base-rebuilt", "delta.patch-downloaded", "unpack.entry:3"])
    func aFailedWriteOnThePatchPathFallsBackToTheArchive(_ point: String) async throws {
        let f = try Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()
        let before = try TreeSnapshot(f.d.layout.clientDirectory(Version(1, 0, 0)))
        try await f.publish("1.1.0", seeds: DeltaDeviceTests.changed)
        let variable = (point.contains(":") ? point : point + ":1") + ":ENOSPC"

        let mark = try await f.d.server.settledLog().count
        let run = try await ClientctlBinary.run(["install", "--root", f.d.layout.root], environment: ["CLIENTCTL_FAIL_AT": variable])
        #expect(run.status == 0, "\(variable): \(run.errorOutput)")
        #expect(
            run.errorOutput.contains("patch from 1.0.0 refused: ") && run.errorOutput.contains(Self.reason("ENOSPC"))
                && run.errorOutput.contains("using the full archive"), "\(variable): \(run.errorOutput)")
        let paths = try await f.paths(since: mark)
        #expect(paths.contains("/stable/v1.1.0.tar.gz"), "\(variable): \(paths)")
        try f.expectInstalledTree("1.1.0")
        #expect(try TreeSnapshot(f.d.layout.clientDirectory(Version(1, 0, 0))) == before, "\(variable): the base changed")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: f.d.layout.clients).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(variable): leftovers \(leftovers)")
    }

    /// The same on the per-file path: the objects' folder or a link fails, the archive installs.
    @Test(arguments: ["files.objects-downloaded", "files.linked:100"])
    func aFailedWriteOnTheFileListPathFallsBackToTheArchive(_ point: String) async throws {
        let f = try await DeltaFileListTests.behindThePatches()
        let variable = (point.contains(":") ? point : point + ":1") + ":EIO"
        let mark = try await f.d.server.settledLog().count
        let run = try await ClientctlBinary.run(["install", "--root", f.d.layout.root], environment: ["CLIENTCTL_FAIL_AT": variable])
        #expect(run.status == 0, "\(variable): \(run.errorOutput)")
        #expect(
            run.errorOutput.contains("file list path refused: ") && run.errorOutput.contains(Self.reason("EIO")),
            "\(variable): \(run.errorOutput)")
        let paths = try await f.paths(since: mark)
        #expect(paths.contains("/stable/v1.2.0.tar.gz"), "\(variable): \(paths)")
        try f.expectInstalledTree("1.2.0")
        #expect(try TreeSnapshot(f.d.layout.clientDirectory(Version(1, 0, 0))) == (try TreeSnapshot(f.d.tmp("src-1.0.0"))))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: f.d.layout.clients).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(variable): leftovers \(leftovers)")
    }

    // MARK: The report journal

    /// A report whose fdatasync fails is counted as lost, never thrown: the install goes
    /// on, the reports written before stay, and a `dropped` report says one may be missing.
    @Test(arguments: ["ENOSPC", "EIO"])
    func aReportThatCannotBeMadeDurableIsCountedAndTheOthersStay(_ errno: String) async throws {
        let rig = try await DeviceReportsTests.rig()
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        let run = try await ClientctlBinary.run(
            ["install", "--root", rig.root], environment: ["CLIENTCTL_FAIL_AT": "journal.appended:2:\(errno)"])
        #expect(run.status == 0, "\(errno): \(run.errorOutput)")
        let reports = try DeviceReportsTests.journal(rig.root)
        let types = DeviceReportsTests.types(reports)
        #expect(types.first == "update-found", "\(types)")
        #expect(types.contains("installed"), "\(types)")
        let dropped = try #require(DeviceReportsTests.find(reports, "dropped"), "\(types)")
        #expect(dropped["count"] == .integer(1), "\(dropped)")
        let seqs = reports.compactMap { report -> Int64? in
            if case .integer(let n)? = report["seq"] { return n }
            return nil
        }
        #expect(seqs == Array(1...Int64(seqs.count)), "\(seqs)")
    }

    // MARK: A deferral whose kept manifest cannot be written

    /// `clientctl` at the wall-clock time `at` (libfaketime), with `environment`.
    static func clientctl(_ arguments: [String], at: Date, environment: [String: String] = [:]) async throws -> Subprocess.Result {
        try await Subprocess.run(
            "faketime", ["-f", DownloadDeferralTests.wall(at), ClientctlBinary.path] + arguments,
            environment: environment.merging(["FAKETIME_DONT_FAKE_MONOTONIC": "1"]) { $1 })
    }

    /// Found by the simulator (`Scripts/simulate --seed 7 --no-compare --long-downloads`): a
    /// deferral keeps the manifest for the next check, whose 304 decides on it. When that
    /// write failed the check still recorded the manifest's ETag beside an older kept
    /// manifest (or none): the next check's 304 decided on the old one, and once that went,
    /// said "up to date" with a newer release offered, until the next publish. Now the ETag
    /// goes with the manifest that could not be kept, and the next check reads the feed.
    @Test(arguments: ["ENOSPC", "EIO"])
    func aDeferralWhoseManifestCannotBeKeptDoesNotFreezeTheDevice(_ errno: String) async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let root = try await DownloadDeferralTests.nightRoot(rig)
        let day = try DownloadDeferralTests.aDayAhead()
        let first = try await Self.clientctl(["install", "--root", root], at: day.addingTimeInterval(12 * 3600))
        #expect(first.status == 0 && DownloadDeferralTests.holds(root, "deferred-manifest.json"), "\(first.errorOutput)")

        // 1.1.0 arrives while the window is closed; the write that keeps its manifest fails.
        try await rig.publish("1.1.0")
        let kept = root + "/deferred-manifest.json"
        var failed: Subprocess.Result?
        for n in 1...4 {
            // The n-th atomic write of the check: the first that is the kept manifest's.
            try FileManager.default.copyItem(atPath: root, toPath: root + "-try")
            let run = try await Self.clientctl(
                ["install", "--root", root + "-try", "--json"], at: day.addingTimeInterval(13 * 3600),
                environment: ["CLIENTCTL_FAIL_AT": "atomic.written:\(n):\(errno)"])
            let keptThere = try? Data(contentsOf: URL(fileURLWithPath: root + "-try/deferred-manifest.json"))
            if keptThere != (try? Data(contentsOf: URL(fileURLWithPath: rig.channelFolder + "/manifest.json"))) {
                try FileManager.default.removeItem(atPath: root)
                try FileManager.default.moveItem(atPath: root + "-try", toPath: root)
                failed = run
                break
            }
            try FileManager.default.removeItem(atPath: root + "-try")
        }
        let run = try #require(failed, "no atomic write of the check kept the manifest")
        let report = try JSONDecoder().decode(InstallReport.self, from: run.stdout)
        #expect(report.result == .deferred, "\(report)")
        #expect(!FileManager.default.fileExists(atPath: kept), "an older kept manifest stayed beside the new ETag")

        // The window opens: the check reads the feed again and installs the newest release.
        let opens = day.addingTimeInterval(25 * 3600)
        let next = try await Self.clientctl(["install", "--root", root, "--json"], at: opens)
        let installed = try JSONDecoder().decode(InstallReport.self, from: next.stdout)
        #expect(installed.result == .installed && installed.version == "1.1.0", "\(installed) \(next.errorOutput)")
    }

    // MARK: A restriction that cannot be kept

    /// Found reading the deferral's defect: the rollout role's restriction is kept with its
    /// ETag, and a 304 judges with the kept copy. When a changed restriction could not be
    /// written, the older copy stayed beside the new ETag, so the next check judged with a
    /// restriction the channel no longer publishes (a cap where a pause now holds). Now the
    /// copy goes when its write fails, and the next check asks for the restriction afresh.
    @Test(arguments: ["ENOSPC", "EIO"])
    func aRestrictionThatCannotBeKeptIsAskedAgainNotJudgedFromAnOlderCopy(_ errno: String) async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        try await rig.restrict(["--pause", "--expires-in", "12h"])
        let root = rig.d.layout.root
        let first = try await ClientctlBinary.run(["install", "--root", root])
        #expect(first.status == 0, "\(first.errorOutput)")
        let kept = rig.d.layout.keptRestriction
        let older = try Data(contentsOf: URL(fileURLWithPath: kept))

        // Another restriction; the write that keeps it fails.
        try await rig.restrict(["--pause", "--expires-in", "6h"])
        let published = try Data(contentsOf: URL(fileURLWithPath: rig.d.releases.channelDirectory + "/restriction.json"))
        #expect(published != older)
        let met = try await Self.installOnCopies(of: root, with: "CLIENTCTL_FAIL_AT", (1...4).map { "atomic.written:\($0):\(errno)" }) {
            run, copy in
            let there = RootLayout(root: copy).keptRestriction
            // The n-th atomic write of the check was the restriction's: the new bytes are not there.
            guard (try? Data(contentsOf: URL(fileURLWithPath: there))) != published else { return false }
            #expect(run.status == 0, "\(run.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: there), "the older restriction stayed beside the new ETag")
            return true
        }
        #expect(met, "no atomic write of the check kept the restriction")

        // The next check asks for the restriction without If-None-Match, and is still held.
        let asked = rig.d.requests(to: "/stable/restriction.json").count
        let next = try await ClientctlBinary.run(["install", "--root", root, "--json"])
        let report = try JSONDecoder().decode(InstallReport.self, from: next.stdout)
        #expect(report.result == .skipped && report.message.contains("paused by the rollout role's restriction"), "\(report)")
        let request = try #require(rig.d.requests(to: "/stable/restriction.json").dropFirst(asked).first)
        #expect(request.headers["if-none-match"] == nil, "\(request.headers)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == published)
    }

    /// Found by the device simulator (`Scripts/simulate --seed 10149 --devices 40 --days 10
    /// --no-compare`, `may-take`, device 0, check 104): a check kept a changed restriction's
    /// bytes while it read the feed and was killed before its state, which names the ETag,
    /// was saved. The next check sent the older ETag, the origin (serving that restriction
    /// again) answered 304, and the device judged with the other bytes: a restriction of
    /// another release, which holds nothing back, so it took the release the origin's
    /// restriction pauses. Now the state names the bytes its ETag came with (their SHA-256),
    /// and a copy that is not those bytes is asked for whole.
    @Test func aRestrictionKeptByAKilledCheckIsNotJudgedOnTheOlderETag() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        let published = rig.d.releases.channelDirectory + "/restriction.json"
        // Another release's restriction (a cap of 1.0.0): nothing it says holds 1.1.0 back.
        try await rig.restrict(["--percent", "50", "--expires-in", "12h"])
        let other = try Data(contentsOf: URL(fileURLWithPath: published))
        try rig.d.publish("1.1.0")
        try await rig.restrict(["--pause", "--expires-in", "12h"])
        let pause = try Data(contentsOf: URL(fileURLWithPath: published))
        let root = rig.d.layout.root
        let first = try await ClientctlBinary.run(["install", "--root", root, "--json"])
        let held = try JSONDecoder().decode(InstallReport.self, from: first.stdout)
        #expect(held.result == .skipped && held.message.contains("paused by the rollout role's restriction"), "\(held) \(first.errorOutput)")
        let kept = rig.d.layout.keptRestriction
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == pause)
        let pauseTag = try #require(try Self.restrictionETag(root))
        // The folder server's ETag is the file's size and modification time (as nginx's):
        // kept, so that serving the pause again is answered 304 to that ETag.
        var served = stat()
        #expect(stat(published, &served) == 0)

        // An edge serves the other restriction for a while; the check that reads it is
        // killed (SIGKILL at a crash point) after it kept those bytes, before its state.
        try other.write(to: URL(fileURLWithPath: published))
        let killed = try await Self.installOnCopies(of: root, with: "CLIENTCTL_CRASH_AT", (1...6).map { "atomic.renamed:\($0)" }) {
            run, copy in
            let kept = try? Data(contentsOf: URL(fileURLWithPath: RootLayout(root: copy).keptRestriction))
            let tag = try Self.restrictionETag(copy)
            return run.status == 128 + SIGKILL && kept == other && tag == pauseTag
        }
        #expect(killed, "no kill left the other restriction beside the pause's ETag")

        // The origin serves the pause again, which that ETag names: a 304 would judge with
        // the other bytes. The check asks for it whole and is held.
        try pause.write(to: URL(fileURLWithPath: published))
        var times = [served.st_atim, served.st_mtim]
        #expect(utimensat(AT_FDCWD, published, &times, 0) == 0)
        let asked = rig.d.requests(to: "/stable/restriction.json").count
        let next = try await ClientctlBinary.run(["install", "--root", root, "--json"])
        let report = try JSONDecoder().decode(InstallReport.self, from: next.stdout)
        #expect(report.result == .skipped && report.message.contains("paused by the rollout role's restriction"), "\(report) \(next.errorOutput)")
        let request = try #require(rig.d.requests(to: "/stable/restriction.json").dropFirst(asked).first)
        #expect(request.headers["if-none-match"] == nil, "\(request.headers)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == pause)
        #expect(try await rig.d.updater().status().installed.map(\.version) == ["1.0.0"])
    }

    /// Runs `clientctl install` on a copy of `root` with `variable` set to each of `values`
    /// in turn (the n-th hit of a point) until `left` says the run left what the test needs;
    /// that copy then takes the root's place. False when no run did.
    static func installOnCopies(
        of root: String, with variable: String, _ values: [String], left: (Subprocess.Result, String) throws -> Bool
    ) async throws -> Bool {
        let copy = root + "-try"
        for value in values {
            try FileManager.default.copyItem(atPath: root, toPath: copy)
            let run = try await ClientctlBinary.run(["install", "--root", copy], environment: [variable: value])
            if try left(run, copy) {
                try FileManager.default.removeItem(atPath: root)
                try FileManager.default.moveItem(atPath: copy, toPath: root)
                return true
            }
            try FileManager.default.removeItem(atPath: copy)
        }
        return false
    }

    /// The `restrictionETag` a root's `state.json` holds, wherever the channel's memory keeps it.
    static func restrictionETag(_ root: String) throws -> String? {
        let data = try Data(contentsOf: URL(fileURLWithPath: RootLayout(root: root).state))
        func find(_ value: Any) -> String? {
            if let object = value as? [String: Any] {
                if let tag = object["restrictionETag"] as? String { return tag }
                return object.values.lazy.compactMap(find).first
            }
            return (value as? [Any])?.lazy.compactMap(find).first
        }
        return find(try JSONSerialization.jsonObject(with: data))
    }

    // MARK: The seam itself

    /// A plan that cannot be read stops the process at once: a test never passes because
    /// its fault was ignored.
    @Test(arguments: ["download.chunk:1", "download.chunk:0:EIO", "download.chunk:1:ENOPE", "download.chunk:x:EIO"])
    func anUnreadableFailPlanStopsWithExit64(_ spec: String) async throws {
        let template = try CrashTemplate.shared.get()
        let device = try await CrashCase(template)
        let run = try await device.install(environment: ["CLIENTCTL_FAIL_AT": spec])
        #expect(run.status == 64, "\(spec): exit \(run.status): \(run.errorOutput)")
        #expect(run.errorOutput.contains("CLIENTCTL_FAIL_AT=\(spec) is not <point>:<n>:<errno>"), "\(spec): \(run.errorOutput)")
        #expect(device.installedVersions(try await device.status(spec)) == ["1.0.0"])
    }
}

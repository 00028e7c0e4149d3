import ClientFoundation
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ClientUpdater

/// A store of plain folders under `clients/`, removed through the channel seam.
final class FolderChannel: UpdateChannel, Sendable {
    let layout: RootLayout
    private let removals = Mutex<[String]>([])
    /// The versions removed so far, in order.
    var removed: [String] { removals.withLock { $0 } }
    init(layout: RootLayout) { self.layout = layout }
    func installedVersions() throws -> [InstalledVersion] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.store("clients"))) ?? []
        return names.filter { !$0.hasPrefix(".") }.map { name in
            let path = layout.store("clients") + "/" + name
            let date = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate]) as? Date
            return InstalledVersion(id: name, directory: path, installedAt: date)
        }
    }
    func embeddedVersion() throws -> InstalledVersion? { nil }
    func check(state: inout DeviceState, reporter: CheckReporter) async throws -> CheckOutcome { .upToDate("") }
    func select(from installed: [InstalledVersion], state: DeviceState) -> InstalledVersion? { nil }
    func remove(_ version: InstalledVersion) throws {
        removals.withLock { $0.append(version.id) }
        try Trash.discard(version.directory)
    }
    func servedAssets(for version: InstalledVersion) throws -> [ServedAsset] { [] }
}

@Suite struct RetentionTests {
    let base = Date(timeIntervalSince1970: 1_700_000_000)

    func v(_ id: String, _ minute: Double) -> InstalledVersion {
        InstalledVersion(id: id, directory: "/x/" + id, installedAt: base.addingTimeInterval(minute * 60))
    }

    func state(current: String?, lkg: String?, pending: String? = nil) -> DeviceState {
        var s = DeviceState()
        s.current = current
        s.lastKnownGood = lkg
        s.pending = pending
        return s
    }

    @Test func fourthCommitRemovesExactlyTheOldestUnprotected() {
        // Commits of 1.0.0, 1.1.0, 1.2.0 keep all three; committing 1.3.0 drops 1.0.0.
        var installed = [v("1.0.0", 0), v("1.1.0", 1), v("1.2.0", 2)]
        #expect(Retention.plan(installed: installed, state: state(current: "1.2.0", lkg: "1.2.0"), keep: 3).remove.isEmpty)
        installed.append(v("1.3.0", 3))
        let plan = Retention.plan(installed: installed, state: state(current: "1.3.0", lkg: "1.3.0"), keep: 3)
        #expect(plan.remove.map(\.id) == ["1.0.0"])
        #expect(Set(plan.kept) == ["1.1.0", "1.2.0", "1.3.0"])
    }

    @Test func protectedVersionsSurviveEvenBeyondN() {
        let installed = [v("1.0.0", 0), v("1.1.0", 1), v("1.2.0", 2), v("1.3.0", 3), v("1.4.0", 4)]
        // Old lastKnownGood, a pending version and the current one are all protected.
        let s = state(current: "1.1.0", lkg: "1.0.0", pending: "1.2.0")
        let plan = Retention.plan(installed: installed, state: s, keep: 2)
        #expect(Set(plan.kept) == ["1.0.0", "1.1.0", "1.2.0"])
        #expect(plan.remove.map(\.id) == ["1.3.0", "1.4.0"])
    }

    @Test func keepOneReproducesMeteorCleanup() {
        let installed = [v("a", 0), v("b", 1), v("c", 2)]
        let plan = Retention.plan(installed: installed, state: state(current: "b", lkg: "b"), keep: 1)
        #expect(plan.kept == ["b"])
        #expect(plan.remove.map(\.id) == ["a", "c"])
    }

    @Test func embeddedIsNeverRemoved() {
        var seed = v("seed", -10)
        seed.isEmbedded = true
        let plan = Retention.plan(
            installed: [seed, v("a", 0), v("b", 1)], state: state(current: "b", lkg: "b"), keep: 1,
            servingEntries: ["seed", "seed.json", "a", "a.json", "b", "b.json", ".tmp-x"], embeddedID: "seed")
        #expect(plan.remove.map(\.id) == ["a"])
        #expect(plan.removeServing == ["a", "a.json"])
    }

    @Test func orderFallsBackToSemVerWithoutInstallTimes() {
        let installed = ["1.10.0", "1.2.0", "1.9.0", "2.0.0"].map { InstalledVersion(id: $0, directory: "/x/" + $0) }
        let plan = Retention.plan(installed: installed, state: state(current: "2.0.0", lkg: "2.0.0"), keep: 2)
        #expect(plan.remove.map(\.id) == ["1.2.0", "1.9.0"])
    }

    @Test func servingFoldersFollowOnDisk() throws {
        let root = try ScratchFolder()
        let layout = RootLayout(root: root.path)
        for (i, id) in ["1.0.0", "1.1.0", "1.2.0", "1.3.0"].enumerated() {
            try AtomicFile.makeDirectory(layout.store("clients") + "/" + id)
            try Data("x".utf8).write(to: URL(fileURLWithPath: layout.store("clients") + "/" + id + "/index.html"))
            let date = base.addingTimeInterval(Double(i) * 60)
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: layout.store("clients") + "/" + id)
            try AtomicFile.makeDirectory(layout.serving + "/" + id)
            try Data("{}".utf8).write(to: URL(fileURLWithPath: layout.serving + "/" + id + ".json"))
        }
        try AtomicFile.makeDirectory(layout.serving + "/0.9.0")  // a leftover of a version already gone
        let channel = FolderChannel(layout: layout)
        let plan = Retention.plan(
            installed: try channel.installedVersions(), state: state(current: "1.3.0", lkg: "1.3.0"),
            keep: 3, servingEntries: Retention.servingEntries(layout))
        let removed = try Retention.apply(plan, channel: channel, layout: layout)
        #expect(removed == ["1.0.0"])
        let fm = FileManager.default
        #expect(try fm.contentsOfDirectory(atPath: layout.store("clients")).sorted() == ["1.1.0", "1.2.0", "1.3.0"])
        #expect(
            try fm.contentsOfDirectory(atPath: layout.serving).sorted()
                == ["1.1.0", "1.1.0.json", "1.2.0", "1.2.0.json", "1.3.0", "1.3.0.json"])
    }

    @Test func interruptedDeletionIsFinishedAndNeverSelectable() throws {
        let root = try ScratchFolder()
        let layout = RootLayout(root: root.path)
        try AtomicFile.makeDirectory(layout.store("clients") + "/.trash-1.0.0-abc/sub")
        try AtomicFile.makeDirectory(layout.store("clients") + "/1.1.0")
        try AtomicFile.makeDirectory(layout.serving + "/.trash-1.0.0-def")
        let channel = FolderChannel(layout: layout)
        #expect(try channel.installedVersions().map(\.id) == ["1.1.0"], "a half-deleted version is invisible")
        #expect(try Trash.finishInterrupted(layout) == [".trash-1.0.0-abc", ".trash-1.0.0-def"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: layout.store("clients")) == ["1.1.0"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: layout.serving).isEmpty)
    }
}

/// A temp folder removed when released (local to these suites).
final class ScratchFolder: Sendable {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "/clientctl-retention-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import Synchronization
import TestSupport
import Testing

/// A channel with an embedded seed and versions stored as folders under `clients/`;
/// `check` "downloads" what the test queued.
final class SeededChannel: UpdateChannel, Sendable {
    let layout: RootLayout
    let seedDirectory: String
    private struct State {
        var seedID: String
        var queue: [String] = []
        var clock = 0.0
        var removed: [String] = []
        var meteorSelection = false
    }
    private let state: Mutex<State>

    init(layout: RootLayout, seedDirectory: String, seedID: String) throws {
        self.layout = layout
        self.seedDirectory = seedDirectory
        state = Mutex(State(seedID: seedID))
        try Self.writePage(seedDirectory, seedID)
    }

    static func writePage(_ dir: String, _ id: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data("<html><head><title>\(id)</title></head><body>\(id)</body></html>".utf8)
            .write(to: URL(fileURLWithPath: dir + "/index.html"))
        try Data("console.log('\(id)')".utf8).write(to: URL(fileURLWithPath: dir + "/app.js"))
    }

    /// The next `check` installs `id`.
    func publish(_ id: String) { state.withLock { $0.queue.append(id) } }
    /// A new shell ships another seed.
    func replaceSeed(_ id: String) throws {
        state.withLock { $0.seedID = id }
        try Self.writePage(seedDirectory, id)
    }
    var removed: [String] { state.withLock { $0.removed } }

    func installedVersions() throws -> [InstalledVersion] {
        let names = try directoryEntries(layout.store("clients"))
        return try names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".t") }.map { name in
            let stampFile = layout.store("clients") + "/" + name + ".t"
            let text = try String(contentsOfFile: stampFile, encoding: .utf8)
            guard let stamp = Double(text) else { throw HarnessError("\(stampFile): not a time stamp: \(text.debugDescription)") }
            return InstalledVersion(id: name, directory: layout.store("clients") + "/" + name, installedAt: Date(timeIntervalSince1970: stamp))
        }
    }

    func embeddedVersion() throws -> InstalledVersion? {
        InstalledVersion(id: state.withLock { $0.seedID }, directory: seedDirectory, isEmbedded: true)
    }

    /// Keeps its memory across a shell update, as the archive channel keeps its floor.
    func shellUpdated(state: inout DeviceState) throws {}

    func check(state deviceState: inout DeviceState, reporter: CheckReporter) async throws -> CheckOutcome {
        let next: (String, Double)? = state.withLock { s in
            guard !s.queue.isEmpty else { return nil }
            s.clock += 1
            return (s.queue.removeFirst(), s.clock)
        }
        guard let (id, stamp) = next else { return .upToDate("up to date") }
        try Self.writePage(layout.store("clients") + "/" + id, id)
        try Data("\(stamp)".utf8).write(to: URL(fileURLWithPath: layout.store("clients") + "/" + id + ".t"))
        deviceState.setMemory(FakeChannel.Memory(highestAccepted: id))
        guard let version = try installedVersions().first(where: { $0.id == id }) else {
            throw UpdaterError(.internalError, "test channel lost \(id)")
        }
        return .installed(version)
    }

    /// Meteor's seed rule instead: the last download unless blacklisted, else the seed.
    var meteorSelection: Bool {
        get { state.withLock { $0.meteorSelection } }
        set { state.withLock { $0.meteorSelection = newValue } }
    }

    func select(from installed: [InstalledVersion], state deviceState: DeviceState) -> InstalledVersion? {
        if meteorSelection {
            guard let last = installed.max(by: { ($0.installedAt ?? .distantPast) < ($1.installedAt ?? .distantPast) }),
                !deviceState.blacklist.contains(last.id)
            else { return nil }
            return last
        }
        return Selection.highestCompatible(installed, shell: Version(1, 0, 0), blacklist: deviceState.blacklist)
    }

    func remove(_ version: InstalledVersion) throws {
        state.withLock { $0.removed.append(version.id) }
        try Trash.discard(version.directory)
        try? FileManager.default.removeItem(atPath: version.directory + ".t")
    }

    func servedAssets(for version: InstalledVersion) throws -> [ServedAsset] {
        [
            ServedAsset(urlPath: "/", sourceFile: version.directory + "/index.html", cacheable: false),
            ServedAsset(urlPath: "/app.js", sourceFile: version.directory + "/app.js", cacheable: true),
        ]
    }
}

/// Records bridge calls and checks they never overlap.
actor RecordingBridge: HostBridge {
    private(set) var calls: [String] = []
    private(set) var maxInFlight = 0
    private var inFlight = 0

    func setServerBasePath(_ path: String) async throws {
        inFlight += 1
        maxInFlight = max(maxInFlight, inFlight)
        for _ in 0..<5 { await Task.yield() }
        calls.append("base " + (path as NSString).lastPathComponent)
        inFlight -= 1
    }

    func reload() async throws {
        inFlight += 1
        maxInFlight = max(maxInFlight, inFlight)
        await Task.yield()
        calls.append("reload")
        inFlight -= 1
    }

    func take() -> [String] {
        defer { calls = [] }
        return calls
    }
}

/// A root with a seeded channel, an updater, a bridge and a manual clock.
struct LifecycleRig {
    let tmp: TemporaryDirectory
    let layout: RootLayout
    let channel: SeededChannel
    let bridge = RecordingBridge()
    let clock = ManualClock()
    let config: DeviceConfig
    let wall = WallClock()

    init(keep: Int = 3, timeout: Double = 10) throws {
        tmp = try TemporaryDirectory("lifecycle")
        layout = RootLayout(root: tmp("root"))
        try AtomicFile.makeDirectory(layout.root)
        channel = try SeededChannel(layout: layout, seedDirectory: tmp("seed"), seedID: "0.9.0")
        config = DeviceConfig(
            app: "com.example.notes", channelKind: .init(rawValue: "seeded"), shellVersion: Version(1, 0, 0),
            deviceSettings: DeviceSettings(startupTimeoutSeconds: timeout, keep: keep))
    }

    func makeUpdater() -> Updater {
        let wall = self.wall
        return Updater(layout: layout, config: config, channel: channel, now: { wall.now }, bootClock: { wall.instant }, logger: .quiet)
    }

    /// Time passes: the wall clock and the boot clock move together.
    func advanceClocks(_ seconds: Double) { wall.advance(seconds) }
    /// Someone sets the wall clock: only it moves.
    func jumpWallClock(_ seconds: Double) { wall.jump(seconds) }

    /// Publishes `id` on the feed, lets `updater` find it, and switches to it (a trial starts).
    func publishAndSwitch(_ id: String, on updater: Updater) async throws {
        channel.publish(id)
        try await updater.checkForUpdates()
        try await updater.reload()
    }

    var state: DeviceState { StateStore.load(layout) }

    func clients() -> [String] { Self.entries(layout.store("clients")).filter { !$0.hasSuffix(".t") }.sorted() }

    func serving() -> [String] { Self.entries(layout.serving).filter { !$0.hasSuffix(".json") }.sorted() }

    /// A folder's names; a listing that fails is a test failure, not an empty folder.
    static func entries(_ path: String) -> [String] {
        do { return try directoryEntries(path) } catch {
            Issue.record("cannot list \(path): \(error)")
            return []
        }
    }
}

/// Reads events until one matches (the stream is finite only on shutdown).
func waitForEvent(_ events: AsyncStream<UpdaterEvent>, _ matches: (UpdaterEvent) -> Bool) async -> UpdaterEvent? {
    for await event in events where matches(event) { return event }
    return nil
}

func isFailure(_ event: UpdaterEvent) -> Bool {
    if case .watchdog(.failed) = event { return true }
    return false
}

/// A settable wall clock and the boot clock beside it: ``advance(_:)`` is time passing
/// (both move), ``jump(_:)`` someone setting the wall clock (only it moves).
final class WallClock: Sendable {
    private let date = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
    private let uptime = Mutex(Duration.seconds(1_000))
    var now: Date { date.withLock { $0 } }
    var instant: BootInstant { BootInstant(bootID: "boot-1", uptime: uptime.withLock { $0 }) }
    func advance(_ seconds: Double) {
        date.withLock { $0 = $0.addingTimeInterval(seconds) }
        uptime.withLock { $0 += .milliseconds(Int64(seconds * 1000)) }
    }
    func jump(_ seconds: Double) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// An in-memory ``UpdateChannel`` for pipeline tests: versions "installed" are plain
/// folders under a temp root; `check` returns what the test scripted.
package final class FakeChannel: UpdateChannel, Sendable {
    private struct State {
        var installed: [InstalledVersion] = []
        var script: [Result<CheckOutcome, UpdaterError>] = []
        var removed: [String] = []
        var onListing: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())
    package let storeDirectory: String
    package let shell: Version

    package init(storeDirectory: String, shell: Version) {
        self.storeDirectory = storeDirectory
        self.shell = shell
    }

    /// Installs a folder for `id` with an index.html and returns its description.
    @discardableResult
    package func addInstalled(_ id: String, minShell: Version? = nil, maxShell: Version? = nil) throws -> InstalledVersion {
        let dir = storeDirectory + "/" + id
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data("<html><head></head><body>\(id)</body></html>".utf8).write(to: URL(fileURLWithPath: dir + "/index.html"))
        let v = InstalledVersion(id: id, directory: dir, minShell: minShell, maxShell: maxShell, installedAt: Date())
        state.withLock { $0.installed.append(v) }
        return v
    }

    /// The next `check` returns this outcome (or throws this error).
    package func enqueue(_ result: Result<CheckOutcome, UpdaterError>) {
        state.withLock { $0.script.append(result) }
    }

    /// Ids passed to `remove`, in order.
    package var removed: [String] { state.withLock { $0.removed } }

    /// Called (synchronously, on the caller's thread) each time the updater lists the
    /// installed versions, which it does inside its locked sections: a test makes it
    /// block there like a slow disk.
    package var onListing: (@Sendable () -> Void)? {
        get { state.withLock { $0.onListing } }
        set { state.withLock { $0.onListing = newValue } }
    }

    package func installedVersions() throws -> [InstalledVersion] {
        onListing?()
        return state.withLock { $0.installed }
    }
    package func embeddedVersion() throws -> InstalledVersion? { nil }

    package func check(state: inout DeviceState, reporter: CheckReporter) async throws -> CheckOutcome {
        let next = self.state.withLock { $0.script.isEmpty ? nil : $0.script.removeFirst() }
        guard let next else { return .upToDate("no scripted outcome") }
        let outcome = try next.get()
        if case .installed(let v) = outcome { state.setMemory(Memory(highestAccepted: v.id)) }
        return outcome
    }

    /// What the fake remembers in `state.json`: the last version it installed.
    package struct Memory: Codable, Sendable, Equatable {
        package var highestAccepted: String?
        package init(highestAccepted: String?) { self.highestAccepted = highestAccepted }
    }

    /// Keeps its memory across a shell update, as the archive channel keeps its floor.
    package func shellUpdated(state: inout DeviceState) throws {}

    /// A rebuilt state remembers the highest version installed, as the archive channel does.
    package func recover(state: inout DeviceState, installed: [InstalledVersion]) {
        state.setMemory(Memory(highestAccepted: installed.compactMap { Version($0.id) }.max()?.description))
    }

    package func select(from installed: [InstalledVersion], state: DeviceState) -> InstalledVersion? {
        Selection.highestCompatible(installed, shell: shell, blacklist: state.blacklist)
    }

    package func remove(_ version: InstalledVersion) throws {
        try FileManager.default.removeItem(atPath: version.directory)
        state.withLock { state in
            state.installed.removeAll { $0.id == version.id }
            state.removed.append(version.id)
        }
    }

    package func servedAssets(for version: InstalledVersion) throws -> [ServedAsset] {
        let files = FileManager.default.subpaths(atPath: version.directory) ?? []
        return files.sorted().compactMap { rel in
            var isDir: ObjCBool = false
            let full = version.directory + "/" + rel
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDir), !isDir.boolValue else { return nil }
            return ServedAsset(urlPath: rel == "index.html" ? "/" : "/" + rel, sourceFile: full, cacheable: false)
        }
    }
}

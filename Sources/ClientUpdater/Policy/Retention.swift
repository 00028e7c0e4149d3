import ClientFoundation
import Foundation

/// Retention (docs/device-layout.md#retention): after a commit keep at most N installed versions.
///
/// ``plan(installed:state:keep:servingEntries:embeddedID:)`` is a pure decision;
/// ``apply(_:channel:layout:)`` carries it out crash-safely. Protected versions —
/// current, pending, lastKnownGood and the embedded seed — are never removed, even when
/// they alone exceed N. The running version takes one of the N places even when it is the
/// embedded seed. Other versions are kept newest first (install time, then SemVer
/// precedence, then id) until N are kept. N = 1 reproduces the Meteor plugin's cleanup:
/// only the running version survives a commit.
package enum Retention {
    /// What retention will do.
    package struct Plan: Sendable, Equatable {
        /// Installed versions that stay, protected ones first.
        package var kept: [String]
        /// Installed versions to delete.
        package var remove: [InstalledVersion]
        /// Folder names under `serving/` to delete (versions no longer kept, or gone).
        package var removeServing: [String]

        package init(kept: [String], remove: [InstalledVersion], removeServing: [String]) {
            self.kept = kept
            self.remove = remove
            self.removeServing = removeServing
        }
    }

    /// Decides which versions and serving folders go.
    ///
    /// - Parameters:
    ///   - installed: the channel's complete versions (embedded ones are ignored: never removed).
    ///   - keep: N, at least 1.
    ///   - servingEntries: names found under `serving/` (folders and their `.json` sidecars).
    ///   - embeddedID: the serving id of the embedded seed, whose folder always stays.
    package static func plan(
        installed: [InstalledVersion], state: DeviceState, keep: Int,
        servingEntries: [String] = [], embeddedID: String? = nil
    ) -> Plan {
        let protected = Set([state.current, state.pending, state.lastKnownGood].compactMap { $0 })
        let stored = installed.filter { !$0.isEmbedded }
        let mustKeep = stored.filter { protected.contains($0.id) }
        let others = stored.filter { !protected.contains($0.id) }.sorted(by: newerFirst)
        // The running version counts toward N even when it is the embedded seed, so N = 1
        // leaves no download beside a running seed (the Meteor plugin's cleanup).
        let seedRuns = state.current.map { id in !stored.contains { $0.id == id } } ?? true
        let room = max(0, max(1, keep) - mustKeep.count - (seedRuns ? 1 : 0))
        let kept = mustKeep + others.prefix(room)
        let remove = Array(others.dropFirst(room)).sorted { newerFirst($1, $0) }

        var keepServing = Set(kept.map(\.id))
        if let embeddedID { keepServing.insert(embeddedID) }
        keepServing.formUnion(protected)
        let removeServing = servingEntries.filter { name in
            guard !name.hasPrefix(".") else { return false }
            let id = name.hasSuffix(".json") ? String(name.dropLast(5)) : name
            return !keepServing.contains(id)
        }.sorted()
        return Plan(kept: kept.map(\.id), remove: remove, removeServing: removeServing)
    }

    /// Carries out a plan: each version through ``UpdateChannel/remove(_:)``, each
    /// serving folder by moving it to a `.trash-*` name first, then deleting it.
    /// - Returns: the ids removed.
    @discardableResult
    package static func apply(_ plan: Plan, channel: any UpdateChannel, layout: RootLayout) throws -> [String] {
        for name in plan.removeServing {
            try Trash.discard(layout.serving + "/" + name)
        }
        var removed: [String] = []
        for version in plan.remove {
            try channel.remove(version)
            removed.append(version.id)
        }
        return removed
    }

    /// The names under `serving/` (empty when it does not exist yet).
    package static func servingEntries(_ layout: RootLayout) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: layout.serving)) ?? []
    }

    /// Newer first: later install time, then higher SemVer, then larger id.
    static func newerFirst(_ a: InstalledVersion, _ b: InstalledVersion) -> Bool {
        switch (a.installedAt, b.installedAt) {
        case (let x?, let y?) where x != y: return x > y
        case (.some, nil): return true
        case (nil, .some): return false
        default: break
        }
        switch (Version(a.id), Version(b.id)) {
        case (let x?, let y?) where x != y: return y < x
        case (.some, nil): return true
        case (nil, .some): return false
        default: return a.id > b.id
        }
    }
}

import ClientUpdater
import DeviceSetup
import Foundation
import SignedArchive
import SignedManifest

extension DeviceEngine {
    /// A root about to be made: its config (from `ArchiveRootSetup` or `MeteorRootSetup`)
    /// and the channel's first files.
    package struct NewRoot: Sendable {
        package var config: DeviceConfig
        /// Archive roots: the trust root `--trust-root` (or a template's) pins.
        package var trustRoot: TrustRoot?
        /// Meteor roots: the first state, written unless the root has one.
        package var state: DeviceState?

        package init(config: DeviceConfig, trustRoot: TrustRoot? = nil, state: DeviceState? = nil) {
            self.config = config
            self.trustRoot = trustRoot
            self.state = state
        }
    }

    /// What ``create(_:at:existing:)`` does with a root that already holds a config.
    package enum Existing: Sendable {
        /// Refuse (`clientctl init`): `.alreadyExists`.
        case refuse
        /// Overwrite the config (`init --force`); installed versions and state are kept.
        case overwrite
        /// Leave the root as it is and return false (a packaged app's every start).
        case keep
    }

    /// Makes a device root, the one way every host does (`clientctl init`, a package's
    /// template at first start): the config and the channel's store under the root's lock,
    /// then the pinned trust root of an archive root or the first state of a Meteor root.
    /// - Returns: false when `existing` is `.keep` and a root was there (nothing written).
    /// - Throws: `UpdaterError` as `RootInitializer` throws (`.alreadyExists`, `.locked`,
    ///   `.invalidArgument`), or the trust store's refusal.
    @discardableResult
    package static func create(_ root: NewRoot, at layout: RootLayout, existing: Existing) async throws -> Bool {
        let config = root.config
        let store = config.channelKind == .meteor ? layout.meteor : layout.clients
        switch existing {
        case .refuse, .overwrite:
            try await RootInitializer.write(config, to: layout, force: existing == .overwrite, store: store)
        case .keep:
            guard try await RootInitializer.createIfAbsent(config, to: layout, store: store) else { return false }
        }
        if let pinned = root.trustRoot {
            let settings = try config.settings(ArchiveSettings.self, layout: layout)
            try TrustStore(layout: layout, settings: settings, app: config.app).save(pinned)
        }
        if let state = root.state, !FileManager.default.fileExists(atPath: layout.state) { try StateStore.save(state, layout) }
        _ = try DeviceKey.readOrCreate(layout)
        return true
    }
}

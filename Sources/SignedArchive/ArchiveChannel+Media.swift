import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON

/// Where a check from offline media reads (docs/offline-media.md).
struct MediaSource: Sendable {
    /// The channel's folder on the media, for messages.
    let path: String
    /// The import folder in the device's root the media's files are copied into.
    let staging: String
    /// The media index, verified with the trust root in force.
    let index: MediaIndex
    /// What copies the media's files into ``staging``.
    let transport: MediaTransport
}

extension ArchiveChannel {
    /// A check from the offline media in `dir` (`install --from DIR`): the same check as
    /// online, every step (roots, signatures, restriction, expiry, floor, replay, targets,
    /// rollout, apply policy), on copies the media's files are first copied into
    /// (``MediaTransport``); the media index, verified with the trust root in force, says
    /// which files may be copied and their digests, and may vouch for its releases
    /// longer than their own `expires` (`offlineExpires`). Media for another app or
    /// channel, or none at all, decides nothing. Nothing is sent to any network, and the
    /// import folder is removed when the check ends.
    func checkMedia(_ dir: String, state: inout DeviceState, reporter: CheckReporter) async throws -> CheckOutcome {
        let folder: MediaFolder
        switch try MediaFolder.open(dir, app: config.app, channel: settings.channel) {
        case .absent(let why): return .upToDate(why)
        case .folder(let opened): folder = opened
        }
        let staging = layout.mediaImport
        try? AtomicFile.removeTree(staging)
        try AtomicFile.makeDirectory(staging)
        defer { try? AtomicFile.removeTree(staging) }
        let transport = MediaTransport(folder: folder, staging: staging)
        let indexBytes: Data
        do {
            indexBytes = try transport.copyIndex()
        } catch let error as SignedArchiveError where error.code == .notFound {
            throw SignedArchiveError(.mediaRefused, "\(folder.path) has no media.json: not media clientctl export wrote")
        }
        var local = self
        local.downloader = Downloader(transport: transport, retry: .never)
        local.settings.manifestURL = transport.url("manifest.json").absoluteString
        // The media's roots first, as online: a root that retired a stolen key is in force
        // before the index is verified with it.
        let root = try await TrustRefresh(store: trust, downloader: local.downloader, manifestURL: transport.url("manifest.json"), now: now())
            .run()
        let index = try MediaIndex.check(indexBytes, app: config.app, channel: settings.channel, root: root, source: folder.path + "/media.json")
        transport.trust(index)
        // A verified signed time (docs/device-time.md#the-floor).
        clock?.witnessed(index.exported, source: "media exported")
        local.media = MediaSource(path: folder.path, staging: staging, index: index, transport: transport)
        logger.info("checking offline media \(folder.path) (exported \(RFC3339.format(index.exported)))")
        let outcome = try await ArchiveInstaller(channel: local, reporter: reporter).run(state: &state)
        if case .installed(let version) = outcome {
            state.archive.fromMedia = (state.archive.fromMedia ?? [:]).merging([version.id: RFC3339.format(index.exported)]) { $1 }
        }
        return outcome
    }
}

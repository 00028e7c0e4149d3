import ClientFoundation
import ClientUpdater
import Foundation

/// The manifest of a release the rollout does not admit this device to yet
/// (`deferred-manifest.json`), kept so that a check answered `304 Not Modified` can decide
/// again as the rollout's steps advance, instead of fetching the same manifest each time.
///
/// It holds bytes that verified; they are verified again when read back (a file in the
/// root is not trusted). A check that ends in anything but another deferral removes it; a
/// check that fails keeps it, with the ETag `state.json` recorded beside it, so the next
/// check decides again on it (a deferral followed by a failed download never freezes a
/// device at "up to date").
struct DeferredManifest {
    let layout: RootLayout
    private var kept = false
    /// A keep could not be written (a full or failing disk): the check must not record the
    /// manifest's ETag, or the next check's 304 would find no manifest to decide on.
    private(set) var lost = false

    init(layout: RootLayout) { self.layout = layout }

    /// The kept bytes, when there are any.
    func read() -> [UInt8]? {
        (try? BoundedFile.read(layout.deferredManifest, cap: 64 * 1024, code: SignedArchiveError.Code.corruptState)).flatMap {
            $0.map { [UInt8]($0) }
        }
    }

    /// Keeps `body` for the next check (written only when it changed). When the write
    /// fails, an older kept manifest goes too and ``lost`` says so.
    mutating func keep(_ body: [UInt8]) {
        kept = true
        if read() == body { return }
        do {
            try AtomicFile.write(Data(body), to: layout.deferredManifest)
        } catch {
            lost = true
            unlink(layout.deferredManifest)
        }
    }

    /// Removes the kept manifest unless this check kept it.
    func finish() {
        if !kept { unlink(layout.deferredManifest) }
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest

/// The channel's `restriction.json` (docs/formats.md#restrictions), fetched at every check
/// of a device whose trust root has a `rollout` role, conditionally: the bytes are kept
/// (``RootLayout/keptRestriction``) with their ETag, so an unchanged restriction costs one
/// `304` and an absent one one `404`. The kept bytes are only a copy: they are checked
/// again against the manifest and the root at every use.
struct KeptRestriction {
    let layout: RootLayout
    let downloader: Downloader
    let manifestURL: URL

    /// What one fetch found.
    struct Fetched: Equatable {
        /// The restriction's bytes, nil when the channel publishes none.
        var bytes: [UInt8]?
        /// Its ETag, for the next conditional GET.
        var etag: String?
        /// True when the bytes differ from the last check's (another restriction, or a
        /// restriction appeared or went).
        var changed: Bool
        /// Where it was read from.
        var source: String
    }

    /// The kept bytes, when there are any.
    func read() -> [UInt8]? {
        (try? BoundedFile.read(layout.keptRestriction, cap: Restriction.maxBytes, code: SignedArchiveError.Code.corruptState)).flatMap {
            $0.map { [UInt8]($0) }
        }
    }

    /// GETs `restriction.json` beside `manifest.json` (`If-None-Match: etag` when the kept
    /// bytes are those whose SHA-256 is `digest`: the ones the ETag came with) and says
    /// whether it changed. `404`/`410`: none. Nothing is kept yet: see ``keep(_:)``, once
    /// the restriction was judged (a refused one leaves the root as it was).
    func fetch(etag: String?, naming digest: String?) async throws -> Fetched {
        guard let url = URL(string: "restriction.json", relativeTo: manifestURL)?.absoluteURL else {
            return Fetched(bytes: nil, etag: nil, changed: false, source: "restriction.json")
        }
        let source = url.absoluteString
        let kept = read()
        // Other bytes than the ETag's (a check killed after it kept them, before the state
        // naming them was saved): a 304 would judge with them, so the GET is plain.
        let condition = kept.flatMap { bytes in digest == Digest.hex(.sha256, of: bytes) ? etag : nil }
        let result: Downloader.SmallFetch
        do {
            result = try await downloader.fetchSmall(url, cap: Restriction.maxBytes, ifNoneMatch: condition)
        } catch let error as UpdaterError where error.httpStatus == 404 || error.httpStatus == 410 {
            return Fetched(bytes: nil, etag: nil, changed: kept != nil, source: source)
        }
        switch result {
        case .notModified(let newETag):
            return Fetched(bytes: kept, etag: newETag, changed: false, source: source)
        case .fetched(let body, let newETag):
            let bytes = [UInt8](body)
            return Fetched(bytes: bytes, etag: newETag, changed: bytes != kept, source: source)
        }
    }

    /// Keeps what `fetched` found for the next check (removes the copy when there is none).
    func keep(_ fetched: Fetched) {
        guard fetched.changed else { return }
        if let bytes = fetched.bytes {
            // A write that fails (a full disk) must not leave the older copy beside the new
            // ETag: the next 304 would judge with it. Without a copy the next GET is plain.
            do {
                try AtomicFile.write(Data(bytes), to: layout.keptRestriction)
            } catch {
                unlink(layout.keptRestriction)
            }
        } else {
            unlink(layout.keptRestriction)
        }
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import Synchronization

/// The transport of a check from offline media (docs/offline-media.md): it answers the
/// installer's `file:` requests under the import folder in the device's root, copying
/// each file from the media into that folder first (``MediaFolder/copy(_:to:expected:cap:)``),
/// so every check and every use reads the device's own copy, never the stick. Before the
/// media index verified, only trust roots (`root/N.json`, self-verifying, 64 KiB) are
/// copied; after, only what the index lists, each checked against its size and SHA-256.
/// Anything else is answered 404: the installer reads it as "not published". Nothing is
/// ever sent to a network.
final class MediaTransport: HeadFirstTransport {
    private let folder: MediaFolder
    /// The import folder (`<root>/media-import`): `file://` URLs under it are served.
    let staging: String
    private let index = Mutex<MediaIndex?>(nil)
    private let copied = Mutex<Set<String>>([])

    init(folder: MediaFolder, staging: String) {
        self.folder = folder
        self.staging = staging
    }

    /// The folder's name on the media, for messages.
    var mediaPath: String { folder.path }

    /// The verified index: from now on, only what it lists is copied.
    func trust(_ verified: MediaIndex) { index.withLock { $0 = verified } }

    /// `file://` URL of `relative` in the import folder.
    func url(_ relative: String) -> URL { URL(fileURLWithPath: staging + "/" + relative) }

    /// Copies `media.json` (at most ``MediaIndex/maxBytes``) and returns its bytes.
    func copyIndex() throws -> Data {
        let target = staging + "/media.json"
        _ = try folder.copy("media.json", to: target, expected: nil, cap: Int64(MediaIndex.maxBytes))
        guard let data = FileManager.default.contents(atPath: target) else {
            throw SignedArchiveError(.io, "cannot read \(target), copied a moment ago")
        }
        return data
    }

    func get(
        _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        let known = index.withLock { $0 }
        let relative = try self.relative(request.url, index: known)
        let listed = known?.file(relative)
        let isRoot = relative.hasPrefix("root/") && relative.hasSuffix(".json")
        guard listed != nil || (known == nil && isRoot) else {
            return try notFound(head)
        }
        if !copied.withLock({ $0.contains(relative) }) {
            let target = staging + "/" + relative
            try AtomicFile.makeDirectory((target as NSString).deletingLastPathComponent)
            do {
                _ = try folder.copy(relative, to: target, expected: listed, cap: listed?.size ?? Int64(TrustRoot.maxBytes))
            } catch let error as SignedArchiveError where error.code == .notFound && listed == nil {
                return try notFound(head)  // no newer root: the walk ends here
            }
            copied.withLock { _ = $0.insert(relative) }
        }
        var local = request
        local.url = URL(fileURLWithPath: staging + "/" + relative)
        return try FileTransport.get(local, head: head, sink: sink)
    }

    /// The path under the channel's folder that `url` names: a `file:` URL under the
    /// import folder, or an absolute URL of a release published with `--base-url`, which
    /// names the file the index lists at the longest matching end of its path
    /// (`https://cdn.example.com/notes/stable/patches/<sha256>.zst` → `patches/<sha256>.zst`).
    /// Nothing is ever fetched from such a URL.
    /// - Throws: ``SignedArchiveError`` `.mediaRefused` for a URL that names nothing on the media.
    func relative(_ url: URL, index: MediaIndex?) throws -> String {
        let path = url.standardizedFileURL.path
        if url.isFileURL, path.hasPrefix(staging + "/") { return String(path.dropFirst(staging.count + 1)) }
        let parts = url.path.split(separator: "/").map(String.init)
        if let index {
            for count in stride(from: min(parts.count, 8), through: 1, by: -1) {
                let candidate = parts.suffix(count).joined(separator: "/")
                if index.file(candidate) != nil { return candidate }
            }
        }
        throw SignedArchiveError(.mediaRefused, "\(url.absoluteString): not on the media (a check from media reads nothing else)")
    }

    /// Copies the listed file `url` names (``relative(_:index:)``) straight to `target`, the
    /// installer's download file: one copy, checked against the index as it is written,
    /// which the installer then finds complete and verifies again instead of copying it
    /// a second time.
    func place(_ url: URL, at target: String) throws {
        let known = index.withLock { $0 }
        let relative = try self.relative(url, index: known)
        guard let listed = known?.file(relative) else { return }
        _ = try folder.copy(relative, to: target, expected: listed, cap: listed.size)
    }

    private func notFound(_ head: (TransportResponse) throws -> Void) throws -> TransportResponse {
        let response = TransportResponse(status: 404, headers: ["x-file-error": "not on the media"])
        try head(response)
        return response
    }
}

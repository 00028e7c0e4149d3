import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// The restriction step of a push: the folder's `restriction.json` (docs/formats.md#restrictions),
/// after the pointers, with their short `Cache-Control`, when it restricts the manifest the
/// store offers now. One for another manifest is superseded: it is not uploaded.
extension ReleasePush {
    /// Uploads `dir/restriction.json` as `channel/restriction.json` when it binds to the
    /// store's `manifest.json` and the store holds other bytes; returns whether it wrote.
    /// - Throws: `ArchivePublishingError` `.storageWriteLost` for a `PUT` the store refused.
    func pushRestriction(channel: String, folder dir: String) async throws -> Bool {
        guard let local = FileManager.default.contents(atPath: dir + "/restriction.json") else { return false }
        let restriction = try Restriction.parse(local, source: dir + "/restriction.json")
        guard let object = try await readPointers(channel).side.manifest, let manifest = try? Manifest.validate(object).get(),
            restriction.restricts(manifest)
        else { return false }
        let key = channel + "/restriction.json"
        let remote = try await client.read(key, limit: Restriction.maxBytes)
        if remote.status == 200, remote.complete, remote.body == local { return false }
        let headers = ["Cache-Control": "public, max-age=\(pointerMaxAge)", "Content-Type": "application/json"]
        let put = try await client.put(key, body: local, headers: headers)
        guard (200..<300).contains(put.status) else {
            throw notWritten(key, put, "devices still see the previous restriction")
        }
        return true
    }
}

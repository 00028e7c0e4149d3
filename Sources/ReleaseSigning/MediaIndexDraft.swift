import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// A media index being written (`clientctl export`, docs/offline-media.md): the app, the
/// channel, the releases the media carries, how long it vouches for them and its files,
/// signed by the release role's keys.
package struct MediaIndexDraft: Sendable, Equatable {
    package var app: String
    package var channel: String
    package var exported: Date
    package var offlineExpires: Date?
    package var releases: [MediaIndex.Release]
    package var files: [MediaIndex.File]

    package init(
        app: String, channel: String, exported: Date, offlineExpires: Date?, releases: [MediaIndex.Release], files: [MediaIndex.File]
    ) {
        self.app = app
        self.channel = channel
        self.exported = exported
        self.offlineExpires = offlineExpires
        self.releases = releases
        self.files = files
    }

    /// The object without signatures: what every signer signs. Files sorted by path.
    package var unsignedObject: JSONObject {
        var o = JSONObject()
        o["format"] = .string(MediaIndex.format)
        o["app"] = .string(app)
        o["channel"] = .string(channel)
        o["exported"] = .string(RFC3339.format(exported))
        if let offlineExpires { o["offlineExpires"] = .string(RFC3339.format(offlineExpires)) }
        o["releases"] = .array(
            releases.map { r in
                var e = JSONObject()
                e["version"] = .string(r.version.description)
                e["sha256"] = .string(r.manifestDigest)
                return .object(e)
            })
        o["files"] = .array(
            files.sorted { $0.path < $1.path }.map { f in
                var e = JSONObject()
                e["path"] = .string(f.path)
                e["size"] = .integer(f.size)
                e["sha256"] = .string(f.sha256)
                return .object(e)
            })
        return o
    }

    /// Signs with each of `signers` (distinct keys) and returns the index as parsed back,
    /// so one a device would refuse for its shape is never written.
    /// - Throws: ``ReleaseSigningError`` `.invalidArgument` without signers; SignedManifest's `.mediaRefused`
    ///   for an index a device would refuse.
    package func sign(by signers: [any DocumentSigner], source: String = "media.json") async throws -> MediaIndex {
        guard !signers.isEmpty else { throw ReleaseSigningError(.invalidArgument, "a media index needs at least one release key") }
        let o = try await SignedObject.sign(unsignedObject, by: signers)
        return try MediaIndex.parse(JSONPrettyPrinter.render(.object(o)), source: source)
    }
}

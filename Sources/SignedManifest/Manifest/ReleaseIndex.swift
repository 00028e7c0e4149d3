import ClientFoundation
import StrictJSON

/// `index.json` of a release folder (docs/formats.md#release-index): every release of a channel, newest first.
///
/// The index object itself is not signed; each entry is a complete signed manifest and is
/// checked with ``ManifestVerifier`` exactly like `manifest.json` (``verify(with:)``).
/// Reading an index only checks its shape; it trusts nothing in it.
package struct ReleaseIndex: Sendable, Equatable {
    /// The value of `format`.
    package static let format = "signed-client-index-v1"

    /// Application id the folder is for (advisory: each entry carries its own, signed).
    package var app: String
    /// Channel name (advisory, like ``app``).
    package var channel: String
    /// The entries as received, each a signed manifest object, newest first.
    package var releases: [JSONObject]

    package init(app: String, channel: String, releases: [JSONObject] = []) {
        self.app = app
        self.channel = channel
        self.releases = releases
    }

    /// Parses `index.json` strictly (16 MiB cap) and checks its shape.
    /// - Throws: ``SignedManifestError`` `.malformedJSON` or `.invalidManifest`, naming `source`.
    package static func parse<Bytes: Collection>(_ bytes: Bytes, source: String = "index.json") throws -> ReleaseIndex
    where Bytes.Element == UInt8 {
        let o: JSONObject
        do {
            o = try StrictJSON.parseObject(bytes, limits: .index, source: source)
        } catch let error as StrictJSONError {
            throw SignedManifestError(.malformedJSON, error.message, underlying: error.underlying)
        }
        func bad(_ why: String) -> SignedManifestError { SignedManifestError(.invalidManifest, "\(source): \(why)") }
        guard case .string(let format)? = o["format"] else { throw bad("field 'format' must be a string") }
        guard format == Self.format else { throw bad("format is \"\(format)\", expected \"\(Self.format)\"") }
        guard case .string(let app)? = o["app"] else { throw bad("field 'app' must be a string") }
        guard case .string(let channel)? = o["channel"] else { throw bad("field 'channel' must be a string") }
        guard case .array(let entries)? = o["releases"] else { throw bad("field 'releases' must be an array") }
        var releases: [JSONObject] = []
        for (k, e) in entries.enumerated() {
            guard case .object(let m) = e else { throw bad("releases[\(k)] must be an object, got \(e.typeName)") }
            releases.append(m)
        }
        return ReleaseIndex(app: app, channel: channel, releases: releases)
    }

    /// Verifies every entry, in order, exactly as `manifest.json` is verified.
    package func verify(with verifier: ManifestVerifier) -> [ManifestVerification] {
        releases.map { verifier.verify($0) }
    }

    /// The entries that verify, newest first by SemVer precedence (invalid ones dropped).
    package func validReleases(with verifier: ManifestVerifier) -> [Manifest] {
        verify(with: verifier).compactMap(\.manifest).sorted { $1.version < $0.version }
    }

    /// Adds a release and keeps the list newest first by version; an entry with the same
    /// version (SemVer equality) is replaced.
    package mutating func insert(_ manifest: Manifest) {
        releases.removeAll { entry in
            if case .string(let s)? = entry["version"], let v = Version(s) { return v == manifest.version }
            return false
        }
        releases.append(manifest.object)
        releases.sort { a, b in
            let va = a["version"]?.stringValue.flatMap(Version.init)
            let vb = b["version"]?.stringValue.flatMap(Version.init)
            switch (va, vb) {
            case (let x?, let y?): return y < x
            case (.some, nil): return true
            default: return false
            }
        }
    }

    /// The index as a file: indented JSON with a newline at the end.
    package func jsonBytes() -> [UInt8] {
        var o = JSONObject()
        o["format"] = .string(Self.format)
        o["app"] = .string(app)
        o["channel"] = .string(channel)
        o["releases"] = .array(releases.map { .object($0) })
        return JSONPrettyPrinter.render(.object(o))
    }
}

import ClientFoundation
import Foundation
import StrictJSON

/// The signed index of one app's channel on offline media (`clientctl export`,
/// docs/offline-media.md): `clientctl-media/<app>/<channel>/media.json`, signed by the trust
/// root's `release` role. It names the app and channel, the releases whose manifests the
/// media carries (bound by their signed digests), how long media may vouch for them
/// (`offlineExpires`), and every file of the folder with its size and SHA-256: a device
/// copies nothing the index does not list and checks each copy against it.
package struct MediaIndex: Sendable, Equatable {
    /// The value of `format`.
    package static let format = "clientctl-media-v1"
    /// Largest index read.
    package static let maxBytes = 4 * 1024 * 1024
    /// Most files one index lists.
    package static let maxFiles = 20_000
    /// Most releases one index names.
    package static let maxReleases = 64
    /// The members an index may have; any other is refused.
    package static let knownFields: Set<String> = [
        "format", "app", "channel", "exported", "offlineExpires", "releases", "files", "signatures",
    ]
    /// The folder of media that holds every app's channels.
    package static let folder = "clientctl-media"

    /// One file of the media folder, as the index lists it.
    package struct File: Sendable, Equatable, Hashable {
        /// The path relative to the channel's folder (`v1.2.0.tar.gz`, `root/2.json`).
        package var path: String
        package var size: Int64
        /// SHA-256 (lowercase hex) of the file's bytes.
        package var sha256: String

        package init(path: String, size: Int64, sha256: String) {
            self.path = path
            self.size = size
            self.sha256 = sha256
        }
    }

    /// A release whose manifest the media carries: its version and the SHA-256 of its
    /// signed bytes (``Manifest/signedDigest``).
    package struct Release: Sendable, Equatable, Hashable {
        package var version: Version
        package var manifestDigest: String

        package init(version: Version, manifestDigest: String) {
            self.version = version
            self.manifestDigest = manifestDigest
        }
    }

    /// The object as signed (`signatures` included).
    package let object: JSONObject
    package let app: String
    package let channel: String
    /// When it was exported: a signed time, which raises a device's floor once verified.
    package let exported: Date
    /// Until when the media vouches for its releases: taken instead of a manifest's own
    /// `expires` for a release read from the media; nil: the manifests' own.
    package let offlineExpires: Date?
    package let releases: [Release]
    package let files: [File]
    package let signatures: [DocumentSignature]

    /// The bytes the signatures cover: RFC 8785 of the object without `signatures`.
    package var signedBytes: [UInt8] {
        var unsigned = object
        unsigned.removeValue(forKey: "signatures")
        return CanonicalJSON.serialize(unsigned)
    }

    /// The index as a file: indented JSON with a newline at the end.
    package func jsonBytes() -> [UInt8] { JSONPrettyPrinter.render(.object(object)) }

    /// The file the index lists at `path`, if any.
    package func file(_ path: String) -> File? { filesByPath[path] }
    private let filesByPath: [String: File]

    /// The release the index names for `manifest`, when it names that signed manifest.
    package func names(_ manifest: Manifest) -> Bool {
        releases.contains { $0.version == manifest.version && $0.manifestDigest == manifest.signedDigest }
    }

    /// Parses an index strictly (``maxBytes``, depth 6, unknown members refused) and checks
    /// its shape: paths under the path rule (``pathProblem(_:)``), each once. It checks no
    /// signature.
    /// - Throws: ``SignedManifestError`` `.mediaRefused` naming `source` and the field.
    package static func parse<Bytes: Collection>(_ bytes: Bytes, source: String) throws -> MediaIndex where Bytes.Element == UInt8 {
        func refuse(_ why: String) -> SignedManifestError { SignedManifestError(.mediaRefused, "\(source): \(why)") }
        guard bytes.count <= maxBytes else { throw refuse("larger than \(maxBytes) bytes") }
        let o: JSONObject
        do {
            o = try StrictJSON.parseObject(bytes, limits: .init(maxBytes: maxBytes, maxDepth: 6), source: source)
        } catch let error as StrictJSONError {
            throw SignedManifestError(.mediaRefused, error.message, underlying: error)
        }
        do {
            return try MediaIndex(validating: o)
        } catch let rejection as ManifestRejection {
            throw refuse(rejection.message)
        }
    }

    private init(validating o: JSONObject) throws {
        let fields = ManifestFieldReader(object: o)
        if let unknown = o.keys.sorted().first(where: { !Self.knownFields.contains($0) }) {
            throw fields.invalid(unknown, "is not a member of a media index")
        }
        let format = try fields.string("format")
        guard format == Self.format else { throw fields.invalid("format", "is \(Quoting.quoted(format)), expected \"\(Self.format)\"") }
        app = try fields.identifier(.app)
        channel = try fields.identifier(.channel)
        exported = try fields.date("exported")
        offlineExpires = try fields.optional("offlineExpires") { try fields.date($0) }
        if let offlineExpires, offlineExpires <= exported { throw fields.invalid("offlineExpires", "is not after 'exported'") }
        releases = try Self.readReleases(fields)
        let files = try Self.readFiles(fields)
        self.files = files
        filesByPath = Dictionary(uniqueKeysWithValues: files.map { ($0.path, $0) })
        signatures = try DocumentSignature.readList(of: o)
        guard !signatures.isEmpty else { throw ManifestRejection(.missingField, field: "signatures", "field 'signatures' is missing or empty") }
        object = o
    }

    private static func readReleases(_ fields: ManifestFieldReader) throws -> [Release] {
        guard case .array(let entries) = try fields.value("releases") else {
            throw ManifestRejection(.wrongType, field: "releases", "field 'releases' must be an array of {\"version\", \"sha256\"}")
        }
        guard (1...maxReleases).contains(entries.count) else {
            throw fields.invalid("releases", "names \(entries.count) releases: 1 to \(maxReleases)")
        }
        var seen = Set<Version>()
        return try entries.enumerated().map { i, entry in
            guard case .object(let e) = entry, Set(e.keys) == ["version", "sha256"] else {
                throw fields.invalid("releases", "entry \(i) is not an object {\"version\", \"sha256\"}")
            }
            let reader = ManifestFieldReader(object: e)
            let release = Release(version: try reader.version("version"), manifestDigest: try reader.sha256("sha256"))
            guard seen.insert(release.version).inserted else { throw fields.invalid("releases", "names \(release.version) twice") }
            return release
        }
    }

    private static func readFiles(_ fields: ManifestFieldReader) throws -> [File] {
        guard case .array(let entries) = try fields.value("files") else {
            throw ManifestRejection(.wrongType, field: "files", "field 'files' must be an array of {\"path\", \"size\", \"sha256\"}")
        }
        guard entries.count <= maxFiles else { throw fields.invalid("files", "lists \(entries.count) files: at most \(maxFiles)") }
        var seen = Set<String>()
        return try entries.enumerated().map { i, entry in
            guard case .object(let e) = entry, Set(e.keys) == ["path", "size", "sha256"] else {
                throw fields.invalid("files", "entry \(i) is not an object {\"path\", \"size\", \"sha256\"}")
            }
            let reader = ManifestFieldReader(object: e)
            let path = try reader.string("path")
            if let problem = pathProblem(path) { throw fields.invalid("files", "entry \(i): path \(Quoting.quoted(path)) \(problem)") }
            guard seen.insert(path).inserted else { throw fields.invalid("files", "lists \(Quoting.quoted(path)) twice") }
            return File(path: path, size: try reader.size("size"), sha256: try reader.sha256("sha256"))
        }
    }

    /// Why `path` cannot name a file of a media folder, or nil: 1–8 parts of 1–128 bytes
    /// joined by `/`, each of ASCII letters, digits, `.`, `_`, `-` and `+`, none `.` or `..`
    /// or starting with `.` (no hidden names, nothing outside the folder), at most 512 bytes.
    package static func pathProblem(_ path: String) -> String? {
        guard !path.isEmpty, path.utf8.count <= 512 else { return "is empty or longer than 512 bytes" }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 8 else { return "has more than 8 parts" }
        for part in parts {
            guard (1...128).contains(part.utf8.count) else { return "has an empty part or one longer than 128 bytes" }
            guard part.first != "." else { return "has a part starting with '.' (a hidden name, '.' or '..')" }
            let allowed = part.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
                    || b == 0x2B
            }
            guard allowed else { return "has a character other than ASCII letters, digits, '.', '_', '-' and '+'" }
        }
        return nil
    }
}

extension MediaIndex {
    /// Checks `bytes` (`media.json`) for a device of `app` following `channel`, with the
    /// trust `root` in force, in this order: shape (``parse(_:source:)``); the app and
    /// channel; a threshold of the root's `release` keys signed it; `offlineExpires` not
    /// after the root's `expires`.
    /// - Throws: ``SignedManifestError`` `.mediaRefused`.
    package static func check<Bytes: Collection>(
        _ bytes: Bytes, app: String, channel: String, root: TrustRoot, source: String
    ) throws -> MediaIndex where Bytes.Element == UInt8 {
        let index = try parse(bytes, source: source)
        func refuse(_ why: String) -> SignedManifestError { SignedManifestError(.mediaRefused, "\(source): \(why)") }
        guard index.app == app, index.channel == channel else {
            throw refuse("is the index of \(index.app) channel '\(index.channel)', found in the folder of \(app) channel '\(channel)'")
        }
        let signers = Threshold.validSigners(index.signatures, message: index.signedBytes, role: root.release, keys: root.keys)
        guard signers.count >= root.release.threshold else {
            throw refuse(
                "signed by \(signers.count) of trust root \(root.version)'s release keys, \(root.release.threshold) needed: "
                    + "only the release role signs media")
        }
        if let until = index.offlineExpires, let limit = root.expires, until > limit {
            throw refuse(
                "offlineExpires \(RFC3339.format(until)) is after trust root \(root.version)'s expiry (\(RFC3339.format(limit))): "
                    + "media cannot outlive the root that vouches for it")
        }
        return index
    }
}

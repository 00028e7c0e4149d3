import ClientFoundation
import Foundation
import StrictJSON

/// The signed `delta` field of a manifest (docs/delta-updates.md#the-delta-field): the
/// release's canonical tree tar and patches to it from older releases.
///
/// ```json
/// "delta": {
///   "tree": {"sha256": "…", "size": 7833600},
///   "files": {"url": "files/….json", "sha256": "…", "size": 48213, "count": 360, "objects": "objects/"},
///   "patches": [{"from": "1.2.0", "base": "…", "url": "patches/….zst", "sha256": "…", "size": 51234}]
/// }
/// ```
package struct ReleaseDelta: Sendable, Equatable {
    /// One patch: applied to the tree tar of release `from` (whose SHA-256 is `base`) it
    /// gives this release's tree tar.
    package struct Patch: Sendable, Equatable {
        package var from: Version
        /// SHA-256 of the base's canonical tree tar, which the device rebuilds and checks.
        package var base: String
        /// Relative to the manifest's URL, or absolute.
        package var url: String
        package var sha256: String
        package var size: Int64

        package init(from: Version, base: String, url: String, sha256: String, size: Int64) {
            self.from = from
            self.base = base
            self.url = url
            self.sha256 = sha256
            self.size = size
        }
    }

    /// Where the release's file list is and how its files are fetched one by one
    /// (docs/delta-updates.md#the-file-list).
    package struct Files: Sendable, Equatable {
        /// The ``ReleaseFileList`` document, relative to the manifest's URL or absolute.
        package var url: String
        package var sha256: String
        package var size: Int64
        /// How many files it lists.
        package var count: Int
        /// Prefix of the content-addressed objects: a file with SHA-256 `h` is at
        /// `objects + h`, relative to the manifest's URL or absolute; ends with `/`.
        package var objects: String

        package init(url: String, sha256: String, size: Int64, count: Int, objects: String) {
            self.url = url
            self.sha256 = sha256
            self.size = size
            self.count = count
            self.objects = objects
        }
    }

    /// Most patches one release lists.
    package static let maxPatches = 32

    /// SHA-256 and length of this release's canonical tree tar (the archive's files as an
    /// uncompressed tar with normalized modes, docs/delta-updates.md#tree-tar).
    package var treeSHA256: String
    package var treeSize: Int64
    /// Newest base first.
    package var patches: [Patch]
    /// The file list, when the release has one.
    package var files: Files?

    package init(treeSHA256: String, treeSize: Int64, patches: [Patch], files: Files? = nil) {
        self.treeSHA256 = treeSHA256
        self.treeSize = treeSize
        self.patches = patches
        self.files = files
    }

    /// The field as JSON, as publish signs it.
    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("tree", .object(JSONObject([("sha256", .string(treeSHA256)), ("size", .integer(treeSize))])))
        ]
        if let f = files {
            members.append(
                (
                    "files",
                    .object(
                        JSONObject([
                            ("url", .string(f.url)), ("sha256", .string(f.sha256)), ("size", .integer(f.size)),
                            ("count", .integer(Int64(f.count))), ("objects", .string(f.objects)),
                        ]))
                ))
        }
        let list = patches.map { p in
            JSONValue.object(
                JSONObject([
                    ("from", .string(p.from.description)), ("base", .string(p.base)), ("url", .string(p.url)),
                    ("sha256", .string(p.sha256)), ("size", .integer(p.size)),
                ]))
        }
        members.append(("patches", .array(list)))
        return .object(JSONObject(members))
    }

    /// Reads the field of a release of `version`, naming the first problem.
    package static func parse(_ value: JSONValue, version: Version) -> Result<ReleaseDelta, ManifestRejection> {
        do {
            guard case .object(let o) = value else {
                throw ManifestRejection(.wrongType, field: "delta", "field 'delta' must be an object, got \(value.typeName)")
            }
            guard case .object(let tree)? = o["tree"] else {
                throw ManifestRejection(.missingField, field: "delta.tree", "field 'delta.tree' must be an object")
            }
            let treeFields = ManifestFieldReader(object: tree)
            var delta = ReleaseDelta(treeSHA256: try treeFields.sha256("sha256"), treeSize: try treeFields.size("size"), patches: [])
            if let value = o["files"] {
                guard case .object(let f) = value else {
                    throw ManifestRejection(.wrongType, field: "delta.files", "field 'delta.files' must be an object, got \(value.typeName)")
                }
                let fields = ManifestFieldReader(object: f)
                let objects = try fields.url("objects")
                guard objects.hasSuffix("/") else { throw fields.invalid("objects", "is \(Quoting.quoted(objects)): must end with '/'") }
                let count = try fields.size("count")
                guard count <= Int64(Int32.max) else { throw fields.invalid("count", "is \(count): too large") }
                delta.files = Files(
                    url: try fields.url("url"), sha256: try fields.sha256("sha256"), size: try fields.size("size"), count: Int(count),
                    objects: objects)
            }
            guard case .array(let entries)? = o["patches"] else {
                throw ManifestRejection(.missingField, field: "delta.patches", "field 'delta.patches' must be an array")
            }
            guard entries.count <= maxPatches else {
                throw ManifestRejection(
                    .invalidValue, field: "delta.patches", "field 'delta.patches' lists \(entries.count) patches, at most \(maxPatches)")
            }
            var seen = Set<Version>()
            for (k, entry) in entries.enumerated() {
                guard case .object(let p) = entry else {
                    throw ManifestRejection(.wrongType, field: "delta.patches[\(k)]", "field 'delta.patches[\(k)]' must be an object")
                }
                let fields = ManifestFieldReader(object: p)
                let patch = Patch(
                    from: try fields.version("from"), base: try fields.sha256("base"), url: try fields.url("url"),
                    sha256: try fields.sha256("sha256"), size: try fields.size("size"))
                guard patch.from < version else {
                    throw fields.invalid("from", "is \(patch.from): a patch's base must be older than \(version)")
                }
                guard seen.insert(patch.from).inserted else {
                    throw fields.invalid("from", "is \(patch.from) twice in 'delta.patches'")
                }
                delta.patches.append(patch)
            }
            return .success(delta)
        } catch let rejection as ManifestRejection {
            return .failure(rejection)
        } catch {
            return .failure(ManifestRejection(.invalidValue, field: "delta", "\(error)"))
        }
    }
}

extension Manifest {
    /// The signed `delta` field: `nil` when the release has none, a failure when it is
    /// malformed (a device then installs from the full archive).
    package var delta: Result<ReleaseDelta, ManifestRejection>? {
        object["delta"].map { ReleaseDelta.parse($0, version: version) }
    }
}

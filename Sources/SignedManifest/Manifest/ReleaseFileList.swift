import ClientFoundation
import Foundation
import StrictJSON

/// The signed description of a release's files (docs/delta-updates.md#the-file-list): one
/// entry per regular file of the tree a device unpacks, sorted by path (UTF-8 byte order),
/// written as canonical JSON (RFC 8785) and pinned by SHA-256 and size from the manifest's
/// `delta.files`, so it is covered by the manifest's signature without a signature of its
/// own.
///
/// ```json
/// {"files":[{"mode":"0644","path":"index.html","sha256":"…","size":1234}, …],"format":"signed-client-files-v1"}
/// ```
///
/// This type reads the document's shape; whether its paths make a tree a device may
/// create (the entry rule) is judged by `ListedTree` in SafeArchive.
package struct ReleaseFileList: Sendable, Equatable {
    package static let format = "signed-client-files-v1"
    /// The only mode devices give files (folders are 0755 and not listed).
    package static let fileMode = "0644"

    /// One regular file of the release.
    package struct File: Sendable, Equatable {
        /// Relative to the web root, `/`-separated.
        package var path: String
        package var size: Int64
        package var sha256: String

        package init(path: String, size: Int64, sha256: String) {
            self.path = path
            self.size = size
            self.sha256 = sha256
        }
    }

    package var files: [File]

    package init(files: [File]) {
        self.files = files.sorted { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }
    }

    /// Sum of the files' sizes.
    package var totalBytes: Int64 { files.reduce(0) { $0 + $1.size } }

    /// The canonical bytes publish writes (and whose SHA-256 the manifest signs).
    package var canonicalBytes: [UInt8] {
        let entries = files.map { f in
            JSONValue.object(
                JSONObject([
                    ("path", .string(f.path)), ("size", .integer(f.size)), ("sha256", .string(f.sha256)),
                    ("mode", .string(Self.fileMode)),
                ]))
        }
        return CanonicalJSON.serialize(JSONObject([("format", .string(Self.format)), ("files", .array(entries))]))
    }

    /// Reads a file list of at most `maxFiles` entries, naming the first problem as
    /// `files[k].field`. Order is not checked here (the bytes are pinned by hash).
    package static func parse(_ bytes: [UInt8], maxFiles: Int) -> Result<ReleaseFileList, ManifestRejection> {
        do {
            let value = try StrictJSON.parse(bytes, limits: StrictJSON.Limits(maxBytes: max(bytes.count, 1), maxDepth: 4), source: "file list")
            guard case .object(let o) = value else {
                throw ManifestRejection(.wrongType, field: "files", "the file list must be a JSON object, got \(value.typeName)")
            }
            let top = ManifestFieldReader(object: o)
            guard try top.string("format") == format else {
                throw top.invalid("format", "is \(Quoting.quoted(try top.string("format"))): expected \(format)")
            }
            guard case .array(let entries)? = o["files"] else {
                throw ManifestRejection(.missingField, field: "files", "field 'files' must be an array")
            }
            guard entries.count <= maxFiles else {
                throw ManifestRejection(
                    .invalidValue, field: "files", "the file list has \(entries.count) files, more than this device's cap of \(maxFiles)")
            }
            var files: [File] = []
            files.reserveCapacity(entries.count)
            for (k, entry) in entries.enumerated() {
                guard case .object(let e) = entry else {
                    throw ManifestRejection(.wrongType, field: "files[\(k)]", "field 'files[\(k)]' must be an object")
                }
                let fields = ManifestFieldReader(object: e)
                let path = try fields.string("path")
                do {
                    guard try fields.string("mode") == fileMode else {
                        throw fields.invalid("mode", "is \(Quoting.quoted(try fields.string("mode"))): files are \(fileMode)")
                    }
                    files.append(File(path: path, size: try fields.size("size"), sha256: try fields.sha256("sha256")))
                } catch let rejection as ManifestRejection {
                    throw ManifestRejection(rejection.reason, field: "files[\(k)]", "files[\(k)] \(Quoting.quoted(path)): \(rejection.message)")
                }
            }
            return .success(ReleaseFileList(unsorted: files))
        } catch let rejection as ManifestRejection {
            return .failure(rejection)
        } catch {
            return .failure(ManifestRejection(.malformedJSON, field: nil, "the file list is not strict JSON: \(error)"))
        }
    }

    /// Keeps the order as read: the device judges the list as published.
    private init(unsorted files: [File]) { self.files = files }
}

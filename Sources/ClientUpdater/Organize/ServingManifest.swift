import ClientFoundation
import Foundation

/// What the server needs to know about an organized version, written by the
/// ``Organizer`` beside the web root as `serving/<id>.json` (never inside it, so it can
/// never collide with a URL path).
package struct ServingManifest: Codable, Sendable, Equatable {
    package static let currentFormat = "clientctl-serving-v1"

    /// One served file.
    package struct Entry: Codable, Sendable, Equatable {
        /// The decoded URL path clients request (`/app/main.js`, `/` for index.html).
        package var urlPath: String
        /// The file's path relative to the serving folder.
        package var file: String
        /// Length in bytes.
        package var size: Int64
        /// True when the asset may be cached forever once requested with its hash.
        package var cacheable: Bool
        /// The channel's content hash (SHA-1 for Meteor), when known.
        package var hash: String?
        /// A content hash the organizer computed itself (SHA-256 hex; index.html).
        package var sha256: String?
        /// URL path of the source map, sent as `X-SourceMap`.
        package var sourceMapURLPath: String?
        /// The channel's asset type (`js`, `css`, `asset`, …).
        package var type: String?

        package init(
            urlPath: String, file: String, size: Int64, cacheable: Bool, hash: String? = nil,
            sha256: String? = nil, sourceMapURLPath: String? = nil, type: String? = nil
        ) {
            self.urlPath = urlPath
            self.file = file
            self.size = size
            self.cacheable = cacheable
            self.hash = hash
            self.sha256 = sha256
            self.sourceMapURLPath = sourceMapURLPath
            self.type = type
        }

        /// The content hash used as the HTTP entity tag, when one is known.
        package var contentHash: String? { hash ?? sha256 }
    }

    package var format: String
    /// The version id (folder name under `serving/`).
    package var id: String
    /// Relative path of the page served for `/` and client-side routes (`index.html`).
    package var index: String?
    /// Every served file, in the order the channel listed them.
    package var entries: [Entry]

    package init(id: String, index: String?, entries: [Entry]) {
        self.format = Self.currentFormat
        self.id = id
        self.index = index
        self.entries = entries
    }

    /// The cap on `serving/<id>.json`: room for the largest release a device accepts
    /// (100,000 entries with paths of up to 1 KiB), while a planted 1 GB file is refused.
    package static let maxFileBytes = 256 << 20

    /// Reads and checks `serving/<id>.json` (at most ``maxFileBytes``).
    package static func read(from path: String) throws -> ServingManifest {
        guard let data = try BoundedFile.read(path, cap: maxFileBytes, code: UpdaterError.Code.corruptState) else {
            throw UpdaterError(.notFound, "serving manifest \(path) does not exist")
        }
        let manifest: ServingManifest
        do {
            manifest = try JSONDecoder().decode(ServingManifest.self, from: data)
        } catch {
            throw UpdaterError(.corruptState, "serving manifest \(path) is not valid: \(error)")
        }
        guard manifest.format == currentFormat else {
            throw UpdaterError(.corruptState, "serving manifest \(path) has unknown format \(manifest.format)")
        }
        return manifest
    }

    /// The encoded bytes (sorted keys, so the same organize gives the same file).
    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

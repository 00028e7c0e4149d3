/// One file of a version as the web view sees it: a URL path and where its bytes are.
///
/// Channels describe their versions with these; the organizer lays them out under
/// `serving/<id>/` and the server uses the metadata for headers. Nothing here is
/// channel-specific.
package struct ServedAsset: Sendable, Equatable, Hashable, Codable {
    /// URL path without query, starting with `/` (e.g. `/app/main.js`, `/` for index.html).
    package var urlPath: String
    /// Absolute path of the file holding the bytes (inside the version or its parent).
    package var sourceFile: String
    /// True when the asset may be cached forever once requested with its hash.
    package var cacheable: Bool
    /// The content hash the channel knows (SHA-1 for Meteor, none for archives).
    package var hash: String?
    /// URL path of the source map, sent as `X-SourceMap`.
    package var sourceMapURLPath: String?
    /// The manifest's asset type (`js`, `css`, `asset`, …), when known.
    package var type: String?

    package init(
        urlPath: String, sourceFile: String, cacheable: Bool, hash: String? = nil,
        sourceMapURLPath: String? = nil, type: String? = nil
    ) {
        self.urlPath = urlPath
        self.sourceFile = sourceFile
        self.cacheable = cacheable
        self.hash = hash
        self.sourceMapURLPath = sourceMapURLPath
        self.type = type
    }
}

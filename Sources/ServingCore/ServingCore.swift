import ClientUpdater
import Foundation
import Logging

/// The serving rules of a client, independent of how requests arrive: `serve`'s loopback
/// HTTP server and the native shell's `app://` scheme both call ``answer(_:)``, so both
/// apply exactly the same rules (docs/serving.md): the current version's files, then its
/// folders' index.html (`/about/`, with `/about` redirected there), then the `www` files
/// of a Meteor shell, then index.html for client-side routes; conditional
/// requests, byte ranges, MIME types, CSP, hashed-name caching, source maps.
package final class ServingCore: Sendable {
    package let pointer: CurrentVersion
    let www: [String: ServedFile]
    let files: FileResponder
    /// File bodies streaming at once in the native shell, on either origin (the `app://`
    /// scheme's pipes, the loopback origin's responses); the rest wait their turn
    /// (docs/native-shell.md#ranges-and-memory). `serve` does not use it.
    package let shellStreams = StreamSlots(limit: ServingCore.shellStreamLimit)
    /// Most file bodies the native shell streams at once.
    package static let shellStreamLimit = 32

    /// - Parameters:
    ///   - wwwDirectory: a Meteor shell's `www` folder (its `application/` is never served).
    ///   - contentSecurityPolicy: sent with every file when set (one line).
    package convenience init(wwwDirectory: String?, contentSecurityPolicy: String?, logger: Logger) throws {
        let www: [String: ServedFile]
        if let wwwDirectory {
            do {
                www = try TreeScanner.scan(wwwDirectory, skipTopLevel: ["application"])
            } catch {
                throw ServingError(.invalidConfiguration, "cannot serve www folder \(wwwDirectory): \(error)")
            }
        } else {
            www = [:]
        }
        self.init(pointer: CurrentVersion(), www: www, files: FileResponder(contentSecurityPolicy: contentSecurityPolicy, logger: logger))
    }

    init(pointer: CurrentVersion, www: [String: ServedFile], files: FileResponder) {
        self.pointer = pointer
        self.www = www
        self.files = files
    }

    /// The version every new request gets (one pointer; a request keeps the one it started with).
    package var version: ServedVersion? {
        get { pointer.version }
        set { pointer.version = newValue }
    }

    /// What a path of a version names, by the rules of ``answer(_:)``.
    enum Resolution {
        /// The version's start page, index.html (`/`, `/index.html`, a client route).
        case startPage(ServedFile)
        /// A file of the version (or a folder's index.html), or of the `www` folder.
        case file(ServedFile, immutable: Bool)
        /// A folder without its slash: a 301 to `/folder/`.
        case folderRedirect(FolderRedirect)
        case notFound
    }

    /// Resolves `path` (decoded) in `version`: its files, its folders' index.html, the `www`
    /// files, then index.html for client-side routes.
    func resolve(_ path: String, query: String?, in version: ServedVersion) -> Resolution {
        let hasQuery = !(query ?? "").isEmpty
        if path == "/favicon.ico" { return .notFound }
        if path == "/" || path == "/index.html", let index = version.index { return .startPage(index) }
        if let file = version.file(at: path) { return .file(file, immutable: hasQuery || HashedName.containsSHA1Hex(path)) }
        // Folder indexes, as nginx's index module: `/about/` is answered exactly as
        // `/about/index.html` would be, and `/about` is sent to `/about/` (a 301) so the
        // page's relative links resolve inside its folder. A folder without index.html is
        // no folder index: it goes on to the rules below (client routes).
        if let page = version.folderIndex(at: path) {
            return .file(page, immutable: hasQuery || HashedName.containsSHA1Hex(page.servedPath))
        }
        if !path.hasSuffix("/"), version.folderIndex(at: path + "/") != nil, let redirect = FolderRedirect(folder: path, query: query) {
            return .folderRedirect(redirect)
        }
        let underApplication = path == "/application" || path.hasPrefix("/application/")
        if !underApplication, let file = www[path], file.answers(path) { return .file(file, immutable: false) }
        // Client-side routing: extension-less paths (and, as in the Meteor plugin,
        // anything under /application when a www folder is served) get index.html.
        let routeLike = PathRules.fileExtension(path) == nil || (underApplication && !www.isEmpty)
        guard routeLike, let index = version.index else { return .notFound }
        return .startPage(index)
    }

    /// The answer to one GET or HEAD of a file path (never `/__clientctl/`).
    package func answer(_ request: FileRequest) async throws -> FileAnswer {
        // One version for the whole request, even if a switch happens meanwhile.
        guard let version = pointer.version else {
            return .plain(503, "no client version is being served\n")
        }
        guard let path = PathRules.decodedPath(request.path) else { return Self.notFound(version: version.id) }
        switch resolve(path, query: request.query, in: version) {
        case .startPage(let index):
            return try await files.answer(index, version: version, request: request, allowImmutable: false)
        case .file(let file, let immutable):
            return try await files.answer(file, version: version, request: request, allowImmutable: immutable)
        case .folderRedirect(let redirect):
            return redirect.answer(isHead: request.isHead, version: version.id)
        case .notFound:
            return Self.notFound(version: version.id)
        }
    }

    /// Whether a GET of `rawPath` (as requested, query included or not) gets the current
    /// version's start page, where the shim and the page's acknowledgement live: a
    /// navigation elsewhere (another HTML file) is no moment to switch versions
    /// (docs/apply-policies.md#the-hosts-the-apply-driver).
    package func answersWithStartPage(_ rawPath: String) -> Bool {
        let pathOnly = String(rawPath.prefix { $0 != "?" && $0 != "#" })
        guard let version = pointer.version, let path = PathRules.decodedPath(pathOnly) else { return false }
        if case .startPage = resolve(path, query: nil, in: version) { return true }
        return false
    }

    static func notFound(version: String?) -> FileAnswer {
        .plain(404, "not found\n", version: version)
    }
}

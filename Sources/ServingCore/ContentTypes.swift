/// Content-Type by file extension (never from the manifest's `type`), as the Meteor
/// plugin's embedded server does; unknown extensions get `application/octet-stream`.
enum ContentTypes {
    static let fallback = "application/octet-stream"

    static let byExtension: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8", "cjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8", "txt": "text/plain; charset=utf-8", "csv": "text/csv; charset=utf-8",
        "xml": "application/xml", "json": "application/json", "map": "application/json",
        "webmanifest": "application/manifest+json", "wasm": "application/wasm", "pdf": "application/pdf",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "avif": "image/avif", "svg": "image/svg+xml", "ico": "image/x-icon", "bmp": "image/bmp",
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf", "eot": "application/vnd.ms-fontobject",
        "mp4": "video/mp4", "webm": "video/webm", "ogv": "video/ogg", "mov": "video/quicktime",
        "mp3": "audio/mpeg", "ogg": "audio/ogg", "wav": "audio/wav", "m4a": "audio/mp4",
        "zip": "application/zip", "gz": "application/gzip",
    ]

    /// The Content-Type for a file name or URL path.
    static func forPath(_ path: some StringProtocol) -> String {
        guard let ext = PathRules.fileExtension(path) else { return fallback }
        return byExtension[ext.lowercased()] ?? fallback
    }
}

import ClientUpdater
import Foundation

/// An archive-style version (plain tree, no channel hashes) organized into a root's
/// `serving/`, for the servers' tests (`serve`'s and the shell's loopback origin).
public final class ArchiveRoot: @unchecked Sendable {
    // Immutable after init.
    public let dir: TemporaryDirectory
    public let layout: RootLayout
    public static let page = "<!doctype html><html><head lang=\"en\"><title>sample</title></head><body><div id=app></div></body></html>"
    public static let big = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    public init(versions: [String: [String: Data]]) throws {
        dir = try TemporaryDirectory("archive-serve")
        layout = RootLayout(root: dir.path)
        for (id, files) in versions {
            let tree = layout.store("clients") + "/v" + id
            var assets: [ServedAsset] = []
            for (relative, bytes) in files.sorted(by: { $0.key < $1.key }) {
                let path = tree + "/" + relative
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try bytes.write(to: URL(fileURLWithPath: path))
                assets.append(ServedAsset(urlPath: "/" + relative, sourceFile: path, cacheable: true))
            }
            try Organizer(layout: layout).organize(id: id, assets: assets)
        }
    }

    public static func standard() throws -> ArchiveRoot {
        try ArchiveRoot(versions: [
            "1.0.0": [
                "index.html": Data(page.utf8), "assets/app-B2x9Kq1z.js": Data("console.log('app')".utf8),
                "style.css": Data("body{color:red}".utf8), "logo.svg": Data("<svg/>".utf8), "mod.wasm": Data([0, 0x61, 0x73, 0x6d]),
                "font.woff2": Data("wOF2".utf8), "hello world.txt": Data("hi".utf8), "video.bin": big,
            ]
        ])
    }

    public func serving(_ id: String) -> String { layout.servingDirectory(id) ?? "" }
}

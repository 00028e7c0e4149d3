import ClientFoundation
import ClientShim
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// A pristine version tree in a temp root, and its served assets (archive style).
private struct Tree {
    let dir: TemporaryDirectory
    let layout: RootLayout
    let versionDir: String
    var assets: [ServedAsset]

    init(files: [String: String]) throws {
        dir = try TemporaryDirectory("organizer")
        layout = RootLayout(root: dir.path)
        versionDir = layout.store("clients") + "/v1.0.0"
        assets = []
        for (relative, content) in files.sorted(by: { $0.key < $1.key }) {
            let path = versionDir + "/" + relative
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            assets.append(ServedAsset(urlPath: "/" + relative, sourceFile: path, cacheable: false))
        }
    }

    func inode(_ path: String) -> UInt64 {
        var st = stat()
        return stat(path, &st) == 0 ? UInt64(st.st_ino) : 0
    }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }
}

@Suite struct OrganizerTests {
    static let page = "<!DOCTYPE html>\n<html>\n<HEAD lang=\"en\" data-x='a>b'>\n<title>t</title>\n</HEAD>\n<body>é</body>\n</html>\n"

    @Test func linksEveryFileButIndexAndInjectsShimOnce() throws {
        let tree = try Tree(files: ["index.html": Self.page, "app.js": "console.log(1)", "css/site.css": "body{}", "img/a b.png": "PNG"])
        let report = try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: tree.assets)
        let serving = tree.layout.serving + "/1.0.0"
        #expect(report.directory == serving)
        #expect(report.linkedFiles == 3 && report.copiedFiles == 1)
        #expect(report.linkedBytes == Int64("console.log(1)".utf8.count + "body{}".utf8.count + 3))
        for file in ["app.js", "css/site.css", "img/a b.png"] {
            #expect(tree.inode(serving + "/" + file) == tree.inode(tree.versionDir + "/" + file), "\(file) is a hard link")
        }
        #expect(tree.inode(serving + "/index.html") != tree.inode(tree.versionDir + "/index.html"))
        // The pristine original is untouched; the copy differs only by the inserted shim.
        #expect(try tree.bytes(tree.versionDir + "/index.html") == Data(Self.page.utf8))
        let served = String(decoding: try tree.bytes(serving + "/index.html"), as: UTF8.self)
        let script = Shim().scriptElement(version: "1.0.0")  // the page names its version
        #expect(served == Self.page.replacingOccurrences(of: "data-x='a>b'>", with: "data-x='a>b'>" + script))
        #expect(report.copiedBytes == Int64(served.utf8.count))
        #expect(served.components(separatedBy: Shim.marker).count == 2)
    }

    /// A folder's index.html (`/about/`, a mkdocs page) is a page the web view shows: it is
    /// copied with the shim like the root's, and the root stays the page of client routes.
    @Test func aFolderIndexGetsTheShimLikeTheRootPage() throws {
        let tree = try Tree(files: ["index.html": Self.page, "about/index.html": Self.page, "about/app.js": "x", "lab/index.htm": "<p>"])
        var assets = tree.assets
        for i in assets.indices where assets[i].urlPath == "/about/index.html" {
            assets[i].cacheable = true  // the channel's hash is of the page without the shim
            assets[i].hash = "3f6275657e6db3a21acb37d0f6c207cf83871e90"
        }
        let report = try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: assets)
        let serving = tree.layout.serving + "/1.0.0"
        #expect(report.copiedFiles == 2 && report.linkedFiles == 2)
        let script = Shim().scriptElement(version: "1.0.0")
        let shimmed = Self.page.replacingOccurrences(of: "data-x='a>b'>", with: "data-x='a>b'>" + script)
        #expect(try tree.bytes(serving + "/about/index.html") == Data(shimmed.utf8))
        #expect(try tree.bytes(tree.versionDir + "/about/index.html") == Data(Self.page.utf8), "the original is untouched")
        #expect(tree.inode(serving + "/lab/index.htm") == tree.inode(tree.versionDir + "/lab/index.htm"), "only index.html is a page")
        let manifest = try ServingManifest.read(from: serving + ".json")
        #expect(manifest.index == "index.html")
        let about = try #require(manifest.entries.first { $0.file == "about/index.html" })
        #expect(about.urlPath == "/about/index.html" && !about.cacheable && about.hash == nil)
        #expect(about.sha256 == Digest.hex(.sha256, of: Data(shimmed.utf8)) && about.size == Int64(shimmed.utf8.count))
    }

    @Test func metadataLivesBesideTheWebRoot() throws {
        let tree = try Tree(files: ["index.html": Self.page, "app.js": "x"])
        var assets = tree.assets
        assets[0].cacheable = true
        assets[0].hash = "3f6275657e6db3a21acb37d0f6c207cf83871e90"
        assets[0].sourceMapURLPath = "/app.js.map"
        assets[0].type = "js"
        try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: assets)
        let manifest = try ServingManifest.read(from: tree.layout.serving + "/1.0.0.json")
        #expect(manifest.id == "1.0.0" && manifest.index == "index.html")
        let app = try #require(manifest.entries.first { $0.urlPath == "/app.js" })
        #expect(
            app.cacheable && app.hash == "3f6275657e6db3a21acb37d0f6c207cf83871e90" && app.sourceMapURLPath == "/app.js.map" && app.type == "js"
                && app.size == 1)
        let index = try #require(manifest.entries.first { $0.file == "index.html" })
        let servedIndex = try tree.bytes(tree.layout.serving + "/1.0.0/index.html")
        #expect(index.urlPath == "/" && index.sha256 == Digest.hex(.sha256, of: servedIndex))
        #expect(!FileManager.default.fileExists(atPath: tree.layout.serving + "/1.0.0/1.0.0.json"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: tree.layout.serving).sorted()
        #expect(leftovers == ["1.0.0", "1.0.0.json"], "no staging folder is left")
    }

    @Test func organizingAgainIsANoOp() throws {
        let tree = try Tree(files: ["index.html": Self.page, "app.js": "x"])
        let organizer = Organizer(layout: tree.layout)
        try organizer.organize(id: "1.0.0", assets: tree.assets)
        let before = tree.inode(tree.layout.serving + "/1.0.0/index.html")
        let again = try organizer.organize(id: "1.0.0", assets: tree.assets)
        #expect(again.alreadyOrganized && again.copiedFiles == 0 && again.linkedFiles == 0)
        #expect(tree.inode(tree.layout.serving + "/1.0.0/index.html") == before)
        #expect(organizer.isOrganized(id: "1.0.0"))
    }

    @Test func anAlreadyShimmedPageIsNotShimmedTwice() throws {
        let shimmed = String(decoding: Shim().inject(into: Data(Self.page.utf8)), as: UTF8.self)
        let tree = try Tree(files: ["index.html": shimmed])
        try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: tree.assets)
        #expect(try tree.bytes(tree.layout.serving + "/1.0.0/index.html") == Data(shimmed.utf8))
    }

    @Test func anInterruptedOrganizeIsRedone() throws {
        let tree = try Tree(files: ["index.html": Self.page, "app.js": "x"])
        let organizer = Organizer(layout: tree.layout)
        // A crash after the rename but before the metadata was written leaves a bare folder.
        try FileManager.default.createDirectory(atPath: tree.layout.serving + "/1.0.0", withIntermediateDirectories: true)
        try Data("stale".utf8).write(to: URL(fileURLWithPath: tree.layout.serving + "/1.0.0/stale.txt"))
        #expect(!organizer.isOrganized(id: "1.0.0"))
        let report = try organizer.organize(id: "1.0.0", assets: tree.assets)
        #expect(!report.alreadyOrganized)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tree.layout.serving + "/1.0.0").sorted() == ["app.js", "index.html"])
    }

    @Test func failuresLeaveNothingBehind() throws {
        let tree = try Tree(files: ["index.html": Self.page])
        var assets = tree.assets
        assets.append(ServedAsset(urlPath: "/gone.js", sourceFile: tree.versionDir + "/gone.js", cacheable: false))
        #expect(throws: UpdaterError.self) { try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: assets) }
        for bad in ["/../x", "/a/../../x", "relative", "/a//b", "/%2e%2e/x"] {
            var hostile = tree.assets
            hostile.append(ServedAsset(urlPath: bad, sourceFile: tree.versionDir + "/index.html", cacheable: false))
            #expect(throws: UpdaterError.self, "\(bad)") { try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: hostile) }
        }
        #expect(throws: UpdaterError.self) { try Organizer(layout: tree.layout).organize(id: "../x", assets: tree.assets) }
        let left = try directoryEntries(tree.layout.serving)
        #expect(left.isEmpty, "left behind: \(left)")
    }

    /// The page is read whole and copied with the shim: one over ``Organizer/maxPageBytes``
    /// (a sparse file, so the test writes nothing) is refused before it is read, and a FIFO
    /// in its place is refused (by the plan, before any read) instead of waited on. Nothing
    /// is left under `serving/`.
    @Test(.timeLimit(.minutes(1))) func aHugeOrSpecialPageIsRefusedUnread() throws {
        let tree = try Tree(files: ["index.html": Self.page, "app.js": "x"])
        let page = tree.versionDir + "/index.html"
        #expect(truncate(page, off_t(Organizer.maxPageBytes + 1)) == 0)
        let huge = #expect(throws: UpdaterError.self) { try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: tree.assets) }
        #expect(huge?.code == .tooLarge)
        #expect(huge?.message == "\(page) is \(Organizer.maxPageBytes + 1) bytes, over the 64 MiB cap for this file: refusing to read it")
        unlink(page)
        #expect(mkfifo(page, 0o644) == 0)
        let fifo = #expect(throws: UpdaterError.self) { try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: tree.assets) }
        #expect(fifo?.message == "cannot organize version 1.0.0: \(page) for / is missing or not a file")
        let left = try directoryEntries(tree.layout.serving)
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test func missingSourceMapsAndDuplicatesAreSkipped() throws {
        let tree = try Tree(files: ["index.html": Self.page, "app.js": "x"])
        var assets = tree.assets
        assets.append(ServedAsset(urlPath: "/app.js.map", sourceFile: tree.versionDir + "/app.js.map", cacheable: true))
        assets.append(ServedAsset(urlPath: "/index.html", sourceFile: tree.versionDir + "/index.html", cacheable: false))
        let report = try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: assets)
        #expect(Set(report.skipped) == ["/app.js.map", "/"])
    }

    @Test func aFileCannotAlsoBeAFolder() throws {
        let tree = try Tree(files: ["index.html": Self.page, "a": "x", "b/c": "y"])
        var assets = tree.assets
        assets.append(ServedAsset(urlPath: "/a/b", sourceFile: tree.versionDir + "/b/c", cacheable: false))
        #expect(throws: UpdaterError.self) { try Organizer(layout: tree.layout).organize(id: "1.0.0", assets: assets) }
    }

    @Test func removeDeletesFolderAndMetadata() throws {
        let tree = try Tree(files: ["index.html": Self.page])
        let organizer = Organizer(layout: tree.layout)
        try organizer.organize(id: "1.0.0", assets: tree.assets)
        try organizer.remove(id: "1.0.0")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tree.layout.serving).isEmpty)
        #expect(FileManager.default.fileExists(atPath: tree.versionDir + "/index.html"), "the pristine tree stays")
    }
}

@Suite struct ShimInjectionTests {
    let script = Shim().scriptElement

    func inject(_ html: String) -> String { String(decoding: Shim().inject(into: Data(html.utf8)), as: UTF8.self) }

    @Test func firstInsideHead() {
        #expect(inject("<html><head><title>x</title></head></html>") == "<html><head>\(script)<title>x</title></head></html>")
        #expect(inject("<html><Head\n class=\"a\">x</Head></html>") == "<html><Head\n class=\"a\">\(script)x</Head></html>")
    }

    @Test func headerAndCommentsAreNotHead() {
        let html = "<!-- <head> --><html><header></header><head>x</head></html>"
        #expect(inject(html) == "<!-- <head> --><html><header></header><head>\(script)x</head></html>")
    }

    @Test func createsHeadWhenMissing() {
        #expect(
            inject("<!doctype html><html lang=en><body>b</body></html>") == "<!doctype html><html lang=en><head>\(script)</head><body>b</body></html>"
        )
        #expect(inject("<!DOCTYPE html>\n<p>x") == "<!DOCTYPE html><head>\(script)</head>\n<p>x")
        #expect(inject("<p>x</p>") == "<head>\(script)</head><p>x</p>")
        // A <head> after <body> is not the document head.
        #expect(inject("<html><body><head></head></body></html>") == "<html><head>\(script)</head><body><head></head></body></html>")
    }

    @Test func idempotent() {
        let once = inject("<html><head></head></html>")
        #expect(inject(once) == once)
    }

    @Test func nonUTF8BytesSurvive() {
        var html = Data("<html><head>".utf8)
        html.append(contentsOf: [0xFF, 0xFE, 0x00, 0xC3])
        html.append(Data("</head></html>".utf8))
        let out = Shim().inject(into: html)
        #expect(out == Data("<html><head>".utf8) + Data(script.utf8) + Data([0xFF, 0xFE, 0x00, 0xC3]) + Data("</head></html>".utf8))
    }

    @Test func capacitorBackendNamesThePlugin() {
        let element = Shim(backend: .capacitor, pluginName: "Web\"App</script>").scriptElement
        #expect(element.contains("\"backend\":\"capacitor\",\"plugin\":\"WebAppscript\""))
        #expect(element.components(separatedBy: "</script>").count == 2)
    }
}

import Foundation
import Logging
import Testing

@testable import ServingCore

/// Which navigations land on the start page (docs/apply-policies.md#the-hosts-the-apply-driver): only
/// those may switch to a staged version, because only the start page carries the shim or the
/// bridge's page that acknowledges the new version's trial. The answer follows the same
/// rules as ``ServingCore/answer(_:)``, on a real folder.
@Suite struct StartPageTests {
    static func core() throws -> (ServingCore, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("start-page-\(UUID().uuidString)/1.0.0").path
        for (path, text) in [
            "index.html": "<p>start</p>", "other.html": "<p>other</p>", "about/index.html": "<p>about</p>", "app.js": "1",
            "docs/guide": "a file without an extension",
        ] {
            let file = dir + "/" + path
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        }
        var logger = Logger(label: "test.start-page")
        logger.logLevel = .critical
        let core = try ServingCore(wwwDirectory: nil, contentSecurityPolicy: nil, logger: logger)
        core.version = try ServedVersion.load(directory: dir, memoryCacheFileLimit: 0, memoryCacheTotalLimit: 0)
        return (core, (dir as NSString).deletingLastPathComponent)
    }

    @Test(arguments: ["/", "/index.html", "/?utm=1", "/route", "/deep/client/route?x=1#top", "/caf%C3%A9"])
    func theStartPageAndClientRoutes(path: String) async throws {
        let (core, dir) = try Self.core()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(core.answersWithStartPage(path))
        // The same rules answer a GET: index.html's bytes.
        let pathOnly = String(path.prefix { $0 != "?" && $0 != "#" })
        let answer = try await core.answer(FileRequest(path: pathOnly, query: nil, isHead: false, ifNoneMatch: nil, range: nil, ifRange: nil))
        #expect(answer.status == 200 && answer.isPage)
    }

    @Test(arguments: ["/other.html", "/about/", "/about", "/app.js", "/missing.js", "/docs/guide", "/favicon.ico", "/%zz"])
    func otherPagesFilesAndRefusals(path: String) throws {
        let (core, dir) = try Self.core()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(!core.answersWithStartPage(path))
    }

    @Test func nothingServedYetIsNoStartPage() throws {
        var logger = Logger(label: "test.start-page")
        logger.logLevel = .critical
        let core = try ServingCore(wwwDirectory: nil, contentSecurityPolicy: nil, logger: logger)
        #expect(!core.answersWithStartPage("/"))
    }
}

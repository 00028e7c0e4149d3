import Foundation
import TestSupport
import Testing

/// `clientctl serve --template`: what the packaged system unit runs
/// (`serve --template /usr/share/PKG --root /var/lib/PKG`), with the real binary.
@Suite struct ServeTemplateTests {
    @Test func serveMakesTheRootFromTheTemplateFollowsAnUpgradeAndOutlivesABrokenTemplate() async throws {
        let tmp = try TemporaryDirectory("serve-template")
        let root = tmp("var/lib/notes")
        try TemplateFolder.make(at: tmp("share"), shell: "1.0.0")
        let first = try await ServeProcess(root: root, arguments: ["--template", tmp("share")], scratch: tmp.path)
        #expect(first.stderr.contains("created \(root) from \(tmp("share"))"), "\(first.stderr)")
        #expect(try await first.get("/").body.contains("seed 1.0.0"))
        #expect(first.stop() == 0)

        // The package upgraded: the root follows the new shell and seed.
        try TemplateFolder.make(at: tmp("share"), shell: "2.0.0")
        let second = try await ServeProcess(root: root, arguments: ["--template", tmp("share")], scratch: tmp.path)
        #expect(second.stderr.contains("shell 1.0.0 → 2.0.0"), "\(second.stderr)")
        #expect(try await second.get("/").body.contains("seed 2.0.0"))
        #expect(second.stop() == 0)

        // A broken template: the device keeps serving what it has, and says why.
        let config = try Data(contentsOf: URL(fileURLWithPath: root + "/config.json"))
        try Data("{\"format\":".utf8).write(to: URL(fileURLWithPath: tmp("share/device-template.json")))
        let third = try await ServeProcess(root: root, arguments: ["--template", tmp("share")], scratch: tmp.path)
        #expect(third.stderr.contains("is used as it is"), "\(third.stderr)")
        #expect(try await third.get("/").body.contains("seed 2.0.0"))
        #expect(third.stop() == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/config.json")) == config, "the root's config is untouched")

        // Without a root there is nothing to fall back on: exit 78 naming the template.
        let refused = try await ClientctlBinary.run(["serve", "--template", tmp("share"), "--root", tmp("fresh"), "--port", "0"])
        #expect(refused.status == 78 && refused.errorOutput.contains(tmp("share")), "\(refused.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: tmp("fresh")))
    }
}

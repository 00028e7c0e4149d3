import ClientEngine
import ClientUpdater
import DeviceSetup
import Foundation
import TestSupport
import Testing

/// A package's template carries the download policy (`clientctl package --download-window …`)
/// to every root made from it; a template whose policy does not read is refused whole.
@Suite struct TemplateDownloadPolicyTests {
    @Test func theRootMadeFromATemplateTakesItsDownloadPolicy() async throws {
        let tmp = try TemporaryDirectory("template-download-policy")
        try TemplateFolder.make(at: tmp("share")) {
            $0["downloadWindows"] = ["01:00-05:00@Europe/Berlin"]
            $0["downloadRate"] = "2MB/s"
            $0["metered"] = "patches:5MB"
            $0["meteredInterfaces"] = ["wwan0"]
        }
        let (outcome, _) = try await TemplateRoot.prepare(template: tmp("share"), root: tmp("root"))
        #expect(outcome == .created)
        let config = try DeviceConfig.load(RootLayout(root: tmp("root")))
        #expect(config.downloadWindows == ["01:00-05:00@Europe/Berlin"])
        #expect(config.downloadRate == "2MB/s")
        #expect(config.metered == "patches:5MB")
        #expect(config.meteredInterfaces == ["wwan0"])
    }

    @Test(arguments: ["downloadWindows", "downloadRate", "metered", "meteredInterfaces"])
    func aTemplateWithAPolicyThatDoesNotReadIsRefused(field: String) async throws {
        let bad: [String: Any] = [
            "downloadWindows": ["25:00-01:00"], "downloadRate": "fast", "metered": "sometimes", "meteredInterfaces": ["wwan/0"],
        ]
        let tmp = try TemporaryDirectory("template-bad-download-policy")
        try TemplateFolder.make(at: tmp("share")) { $0[field] = bad[field] }
        await #expect(throws: (any Error).self) { try await TemplateRoot.prepare(template: tmp("share"), root: tmp("root")) }
        #expect(!FileManager.default.fileExists(atPath: tmp("root") + "/config.json"), "no root made")
    }
}

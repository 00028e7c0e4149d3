import ClientEngine
import ClientUpdater
import DeviceSetup
import Foundation
import TestSupport
import Testing

/// A package's template names the collector (`clientctl package --report-url`): the root
/// made from it reports there; a template with a URL the rules refuse is refused whole.
@Suite struct TemplateReportURLTests {
    @Test func theRootMadeFromATemplateTakesItsReportURL() async throws {
        let tmp = try TemporaryDirectory("template-report-url")
        try TemplateFolder.make(at: tmp("share")) { $0["reportURL"] = "https://reports.example.com/fleet/" }
        let (outcome, template) = try await TemplateRoot.prepare(template: tmp("share"), root: tmp("root"))
        #expect(outcome == .created && template?.reportURL == "https://reports.example.com/fleet/")
        let config = try DeviceConfig.load(RootLayout(root: tmp("root")))
        #expect(config.reportURL == "https://reports.example.com/fleet/")
    }

    @Test func withoutOneTheRootHasNone() async throws {
        let tmp = try TemporaryDirectory("template-no-report-url")
        try TemplateFolder.make(at: tmp("share"))
        _ = try await TemplateRoot.prepare(template: tmp("share"), root: tmp("root"))
        #expect(try DeviceConfig.load(RootLayout(root: tmp("root"))).reportURL == nil)
        let text = try String(contentsOfFile: tmp("share") + "/" + DeviceTemplate.fileName, encoding: .utf8)
        #expect(!text.contains("reportURL"), "a template without a URL is written as before")
    }

    @Test(arguments: ["http://reports.example.com/", "ftp://127.0.0.1/", "https://u:p@reports.example.com/"])
    func aTemplateWithABadReportURLIsRefused(url: String) async throws {
        let tmp = try TemporaryDirectory("template-bad-report-url")
        try TemplateFolder.make(at: tmp("share")) { $0["reportURL"] = url }
        await #expect(throws: (any Error).self) { try await TemplateRoot.prepare(template: tmp("share"), root: tmp("root")) }
        #expect(!FileManager.default.fileExists(atPath: tmp("root") + "/config.json"), "no root made")
    }
}

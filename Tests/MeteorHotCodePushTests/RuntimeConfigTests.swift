import ClientFoundation
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

@Suite struct RuntimeConfigTests {
    static func page(_ json: String) -> String {
        let encoded = json.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return
            "<html><head><script type=\"text/javascript\">\n    __meteor_runtime_config__ = JSON.parse(decodeURIComponent(\"\(encoded)\"));\n</script></head></html>"
    }

    @Test func extractsAndPercentDecodes() throws {
        let config = try RuntimeConfig.extract(
            fromIndexHTML: Self.page(#"{"ROOT_URL":"http://localhost:3000/","appId":"a+b c","autoupdateVersionCordova":"v1"}"#))
        #expect(config == RuntimeConfig(rootURL: "http://localhost:3000/", appId: "a+b c", autoupdateVersionCordova: "v1"))
    }

    @Test(arguments: [
        "<html></html>", "__meteor_runtime_config__ = JSON.parse(decodeURIComponent(\"%7B\"))",
        "__meteor_runtime_config__ = JSON.parse(decodeURIComponent(\"%ZZ\"))",
    ])
    func failsWhenTheConfigCannotBeRead(_ html: String) {
        #expect { try RuntimeConfig.extract(fromIndexHTML: html) } throws: {
            ($0 as? MeteorError)?.message == "Couldn't load runtime config from index file"
        }
    }

    @Test func checksRunInThePluginsOrder() {
        let all = RuntimeConfig(rootURL: "http://localhost:3000/", appId: "app", autoupdateVersionCordova: "v3")
        #expect(
            all.problem(expectedVersion: "v2", currentRootURL: "http://10.0.0.1/", currentAppId: "other")
                == .versionMismatch(expected: "v2", actual: "v3"))
        let mismatch = RuntimeConfig.Problem.versionMismatch(expected: "version2", actual: "version3")
        #expect(mismatch.message.hasPrefix("Version mismatch for index page, expected: version2, actual: version3"))
        // A rolling deploy is temporary: exit 75, unlike the other refusals (65).
        #expect(mismatch.error.code == .versionMismatch && mismatch.error.kind == .tempFail)
        #expect(RuntimeConfig.Problem.missingAppId.error.kind == .dataError)
        let noRoot = RuntimeConfig(rootURL: nil, appId: nil)
        #expect(noRoot.problem(expectedVersion: "v", currentRootURL: nil, currentAppId: nil) == .missingRootURL)
        let toLocalhost = RuntimeConfig(rootURL: "http://localhost:3001/", appId: nil)
        #expect(toLocalhost.problem(expectedVersion: "v", currentRootURL: "http://127.0.0.1:3000/", currentAppId: "a") == .rootURLChangesToLocalhost)
        #expect(toLocalhost.problem(expectedVersion: "v", currentRootURL: "http://localhost:3000/", currentAppId: "a") == .missingAppId)
        let other = RuntimeConfig(rootURL: "https://example.com/", appId: "b")
        #expect(
            other.problem(expectedVersion: "v", currentRootURL: "http://localhost:3000/", currentAppId: "a")
                == .appIdMismatch(rootURL: "https://example.com/"))
        #expect(other.problem(expectedVersion: "v", currentRootURL: "http://localhost:3000/", currentAppId: "b") == nil)
        #expect(RuntimeConfig.Problem.rootURLChangesToLocalhost.message.contains("would change current ROOT_URL to localhost."))
        #expect(RuntimeConfig.Problem.appIdMismatch(rootURL: "x").message.hasPrefix("appId in downloaded asset bundle does not match current appId"))
    }

    // packages/autoupdate/autoupdate_server.js puts the version in
    // autoupdate.versions["web.cordova"]; older servers wrote autoupdateVersionCordova.
    @Test func readsTheWebCordovaVersionWithTheLegacyFieldAsFallback() throws {
        for shape in MeteorShape.allCases {
            var content = MeteorScenarioFixtures.content(2)
            content.pageVersion = "v-\(shape)"
            let html = MeteorShapedApp.render(content, shape: shape).indexHTML
            let config = try RuntimeConfig.extract(fromIndexHTML: String(decoding: html, as: UTF8.self))
            #expect(config.pageVersion == "v-\(shape)")
            #expect((shape == .current ? config.webCordovaVersion : config.autoupdateVersionCordova) == "v-\(shape)")
            #expect(
                config.problem(expectedVersion: "version2", currentRootURL: nil, currentAppId: content.appId)
                    == .versionMismatch(expected: "version2", actual: "v-\(shape)"))
        }
        let both = RuntimeConfig(rootURL: "http://a/", appId: "x", autoupdateVersionCordova: "old", webCordovaVersion: "new")
        #expect(both.pageVersion == "new")
        #expect(RuntimeConfig(rootURL: "http://a/", appId: "x").problem(expectedVersion: "v", currentRootURL: nil, currentAppId: "x") == nil)
    }
}

import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

/// Where a run of the reference scenarios (docs/meteor.md#the-reference-test-suite, 27–68) gets its app:
/// ``MeteorScenarioFixtures`` generated in a ``MeteorShape`` and served like a real Meteor
/// server (packages/webapp/webapp_server.js), or the plugin's own fixtures served by the
/// plugin's test mock (only under `Scripts/meteor-reference-replay`, which names them in
/// `CLIENTCTL_METEOR_REFERENCE`).
enum ScenarioSource: Sendable, CustomStringConvertible {
    case reference
    case generated(MeteorShape)

    /// Both generated shapes always; the reference set when `CLIENTCTL_METEOR_REFERENCE`
    /// is set (its cases then fail, never vanish, when the folder is wrong).
    static var available: [ScenarioSource] {
        MeteorShape.allCases.map { .generated($0) } + (MeteorFixtures.referenceRequested ? [.reference] : [])
    }

    var description: String {
        switch self {
        case .reference: return "reference fixtures"
        case .generated(let shape): return "generated \(shape) Meteor"
        }
    }

    /// A fresh harness on this source and the expectations that depend on its shape.
    func make() throws -> ScenarioRun {
        switch self {
        case .reference:
            return ScenarioRun(harness: try MeteorHarness.reference(), fixtures: nil)
        case .generated(let shape):
            let (h, fixtures) = try MeteorHarness.generated(shape)
            return ScenarioRun(harness: h, fixtures: fixtures)
        }
    }
}

/// A harness plus the shape-dependent URL paths the scenarios expect.
struct ScenarioRun {
    let harness: MeteorHarness
    let fixtures: MeteorScenarioFixtures?

    static let referenceTemplateMaps = [
        "version2": "/app/3f6275657e6db3a21acb37d0f6c207cf83871e90.map",
        "version3": "/app/36e96c1d40459ae12164569599c9c0a203b36db7.map",
    ]

    /// URL paths fetched because the script changed in `version` (script, map, stats).
    func changedScript(_ version: String) throws -> [String] {
        guard let fixtures else { return ["/app/template.mobileapp.js", Self.referenceTemplateMaps[version] ?? ""] }
        return try fixtures.changedScriptDownloads(version)
    }

    /// The URL path of version2's changed script (named in error messages).
    var scriptURL: String {
        get throws { try changedScript("version2")[0] }
    }

    /// The URL path a public file is downloaded by.
    func publicURL(_ name: String) -> String { fixtures?.publicURL(name) ?? "/\(name)" }

    /// The expected requests: the manifest, index.html (`/`) and these URL paths.
    func requests(_ paths: [String]) -> Set<String> {
        Set(["/__cordova/manifest.json", "/__cordova/"] + paths.map { "/__cordova" + $0 })
    }

    /// `partially_downloaded_versions/version2` of this source.
    var partialVersion2: String {
        get throws {
            if let fixtures { return fixtures.partialVersion2 }
            return try MeteorFixtures.reference() + "/partially_downloaded_versions/version2"
        }
    }
}
